/**
 * How long a connection may sit idle between requests (`limits.keep_alive_seconds`, ARCHITECTURE.md
 * §11 "Hostile clients"): without a bound, every connection a client opens and leaves open holds a
 * socket for good.
 *
 * Bun's idle timeout cannot simply be set: it counts from the last byte received, also while a
 * handler works and while its response is being sent (a 50 MB body read steadily by its client was
 * cut when the timeout ran out). So it is turned off when a request arrives — the query, payment,
 * receive and send limits bound a request in flight — and set again once the response has been
 * handed over, with time to send what is left of it.
 */

/** The longest idle timeout Bun takes, in seconds. */
export const MAX_IDLE_SECONDS = 255;

/** The slowest a client is assumed to read a body handed over whole (64 KiB/s, 512 kbit/s). */
const SLOWEST_READ_BYTES_PER_SECOND = 64 * 1024;

/**
 * The idle timeout to set once a response is handed over with `bytesToSend` still to send: the
 * keep-alive time plus the time to send them; 0 (none) when that is more than Bun allows, so that a
 * large buffered result is never cut while its client reads it.
 */
export function idleSecondsAfter(keepAliveSeconds: number, bytesToSend: number): number {
  const seconds = keepAliveSeconds + Math.ceil(bytesToSend / SLOWEST_READ_BYTES_PER_SECOND);
  return seconds <= MAX_IDLE_SECONDS ? seconds : 0;
}
