/**
 * The fuzzer's only source of randomness: mulberry32, seeded from `ARROW402_FUZZ_SEED`, so that a
 * run is replayed by running it again with the seed its failure printed. Each test file derives its
 * own stream from the seed and a label, so adding cases to one file never changes another's.
 */

/** The seed of a plain `bun test` run; any failure message names the seed it ran with. */
export const DEFAULT_SEED = 402;

/** Requests of a plain run, across all fuzz files (sized for CI: the suite takes well under a minute). */
export const DEFAULT_REQUESTS = 3000;

export interface FuzzSettings {
  seed: number;
  /** Total requests across the fuzz files; each file takes its share. */
  requests: number;
}

export function fuzzSettings(env: Record<string, string | undefined> = process.env): FuzzSettings {
  return {
    seed: readInteger(env.ARROW402_FUZZ_SEED, "ARROW402_FUZZ_SEED", DEFAULT_SEED),
    requests: readInteger(env.ARROW402_FUZZ_REQUESTS, "ARROW402_FUZZ_REQUESTS", DEFAULT_REQUESTS),
  };
}

function readInteger(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got '${raw}'`);
  return value;
}

/** This file's share of the requests: `weight` of the total, at least `minimum`. */
export function share(settings: FuzzSettings, weight: number, minimum = 20): number {
  return Math.max(minimum, Math.round(settings.requests * weight));
}

export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A stream of its own for `label` under `seed` (FNV-1a of the label mixed into the seed). */
  static derive(seed: number, label: string): Random {
    let hash = 0x811c9dc5;
    for (const char of label) hash = Math.imul(hash ^ char.codePointAt(0)!, 0x01000193);
    return new Random((seed ^ hash) >>> 0);
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = Math.imul(this.state ^ (this.state >>> 15), 1 | this.state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from an empty list");
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** One of the entries, each as likely as its weight. */
  weighted<T>(entries: readonly (readonly [number, T])[]): T {
    const total = entries.reduce((sum, [weight]) => sum + weight, 0);
    let point = this.next() * total;
    for (const [weight, value] of entries) {
      point -= weight;
      if (point < 0) return value;
    }
    return entries[entries.length - 1]![1];
  }

  /** A length biased towards small values, with a long tail up to `max`. */
  size(max: number): number {
    const r = this.next();
    if (r < 0.6) return this.int(0, Math.min(max, 4));
    if (r < 0.9) return this.int(0, Math.min(max, 40));
    return this.int(0, max);
  }

  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  }

  /** `count` bytes, uniformly random. */
  bytes(count: number): Uint8Array {
    const out = new Uint8Array(count);
    for (let i = 0; i < count; i++) out[i] = this.int(0, 255);
    return out;
  }

  /** A string of `length` characters drawn from `alphabet`. */
  string(length: number, alphabet: string | readonly string[]): string {
    const chars = typeof alphabet === "string" ? [...alphabet] : alphabet;
    let out = "";
    for (let i = 0; i < length; i++) out += this.pick(chars);
    return out;
  }

  /** Any Unicode scalar values, with extra weight on control, separator and astral characters. */
  unicode(length: number): string {
    let out = "";
    for (let i = 0; i < length; i++) {
      const code = this.weighted<() => number>([
        [3, () => this.int(0x20, 0x7e)],
        [2, () => this.int(0x00, 0x1f)],
        [1, () => this.pick([0x7f, 0x85, 0xa0, 0xad, 0x2028, 0x2029, 0x200b, 0x202e, 0xfeff, 0xfffd, 0xffff])],
        [1, () => this.int(0x80, 0x7ff)],
        [1, () => this.int(0x800, 0xd7ff)],
        [1, () => this.int(0x10000, 0x10ffff)],
      ])();
      out += String.fromCodePoint(code);
    }
    return out;
  }
}
