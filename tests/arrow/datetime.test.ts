/**
 * ISO-8601 parsing checked against SQLite's own date functions: for every text arrow402 accepts,
 * the days and milliseconds equal what SQLite computes for the same text (no offset = UTC).
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { parseIsoDate, parseIsoTimestamp } from "../../src/arrow/datetime.ts";
import { seededRandom } from "./support.ts";

const sqlite = new Database(":memory:");
const sqliteDays = sqlite.query<{ days: number | null; same: number | null }, [string]>(
  "SELECT CAST(round(julianday(?1) - 2440587.5) AS INTEGER) AS days, date(?1) = ?1 AS same",
);
const sqliteMs = sqlite.query<{ ms: number | null }, [string]>(
  "SELECT unixepoch(?1) * 1000 + CAST(round((strftime('%f', ?1) - strftime('%S', ?1)) * 1000) AS INTEGER) AS ms",
);

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

describe("dates", () => {
  test("random calendar dates give SQLite's day numbers; impossible dates do not parse", () => {
    const random = seededRandom(7);
    for (let i = 0; i < 300; i++) {
      const text = `${pad(Math.floor(random() * 10_000), 4)}-${pad(1 + Math.floor(random() * 12))}-${pad(1 + Math.floor(random() * 31))}`;
      const oracle = sqliteDays.get(text)!;
      // SQLite normalises 2023-02-31 to March; date(x) = x holds only for real calendar dates.
      if (oracle.same === 1) expect(parseIsoDate(text)).toBe(oracle.days!);
      else expect(parseIsoDate(text)).toBeNaN();
    }
  });

  test("only the exact YYYY-MM-DD form is a date", () => {
    for (const text of ["2024-1-01", "2024-01-1", "24-01-01", "2024/01/01", "2024-01-01 ", " 2024-01-01", "2024-00-10", "2024-13-01", "2024-01-00", "+2024-01-01", ""]) {
      expect(parseIsoDate(text)).toBeNaN();
    }
  });
});

describe("timestamps", () => {
  test("random timestamps in every accepted form give SQLite's milliseconds", () => {
    const random = seededRandom(11);
    const pick = <T,>(items: T[]) => items[Math.floor(random() * items.length)]!;
    for (let i = 0; i < 400; i++) {
      const date = `${pad(1 + Math.floor(random() * 9998), 4)}-${pad(1 + Math.floor(random() * 12))}-${pad(1 + Math.floor(random() * 28))}`;
      let time = `${pad(Math.floor(random() * 24))}:${pad(Math.floor(random() * 60))}`;
      if (random() < 0.7) time += `:${pad(Math.floor(random() * 60))}`;
      if (time.length === 8 && random() < 0.6) time += `.${String(Math.floor(random() * 1000)).padStart(3, "0").slice(0, 1 + Math.floor(random() * 3))}`;
      const zone = pick(["", "", "Z", `+${pad(Math.floor(random() * 15))}:${pick(["00", "30", "45"])}`, `-${pad(Math.floor(random() * 13))}:00`]);
      const text = random() < 0.1 ? date : `${date}${pick(["T", " "])}${time}${zone}`;
      expect({ text, ms: parseIsoTimestamp(text) }).toEqual({ text, ms: sqliteMs.get(text)!.ms! });
    }
  });

  test("trailing zeros past the millisecond are exact; other digits there are not", () => {
    expect(parseIsoTimestamp("2024-01-01T00:00:00.120000Z")).toBe(Date.UTC(2024, 0, 1, 0, 0, 0, 120));
    expect(parseIsoTimestamp("2024-01-01T00:00:00.1201")).toBeNaN();
  });

  test("malformed times and offsets do not parse", () => {
    for (const text of [
      "2024-01-01T",
      "2024-01-01T10",
      "2024-01-01T10:5",
      "2024-01-01T24:00",
      "2024-01-01T10:60",
      "2024-01-01T10:00:60",
      "2024-01-01T10:00:00.",
      "2024-01-01T10:00.5",
      "2024-01-01T10:00:00+0100",
      "2024-01-01T10:00:00+01",
      "2024-01-01T10:00:00 Z",
      "2024-01-01T10:00:00ZZ",
      "2024-01-01X10:00",
      "2024-02-30T10:00",
    ]) {
      expect({ text, ms: parseIsoTimestamp(text) }).toEqual({ text, ms: NaN });
    }
  });
});
