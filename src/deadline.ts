/**
 * Work that must end by a deadline, for every place a wait on something outside the process is
 * bounded (the chain read after a failed settlement, the readiness checks, the PostgreSQL ledger,
 * the shutdown drain).
 */

/**
 * The result of `work`, or once `ms` have passed first, what `late()` returns (or throws). `work`
 * receives a signal aborted at the deadline, so a task made of several calls can stop starting new
 * ones; work that ignores it runs on, and its late result or failure is dropped. The timer never
 * outlives the race.
 */
export async function withDeadline<T, L>(work: (expired: AbortSignal) => Promise<T>, ms: number, late: () => L): Promise<T | L> {
  const expiry = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<L>((resolve, reject) => {
    timer = setTimeout(() => {
      expiry.abort();
      try {
        resolve(late());
      } catch (error) {
        reject(error);
      }
    }, ms);
  });
  const running = work(expiry.signal);
  running.catch(() => {}); // given up on: its late failure is nobody's to handle
  try {
    return await Promise.race([running, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
