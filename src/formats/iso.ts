/**
 * ISO-8601 text for the values of Date32 and Timestamp(ms, UTC) columns, as the text formats write
 * them: `YYYY-MM-DD` and `YYYY-MM-DDTHH:MM:SS.sssZ`, the same instant the Arrow stream carries.
 *
 * A timestamp read from Unix seconds may lie far outside JavaScript's Date range (±8.64e15 ms):
 * those are written with an expanded year (`+292278994-08-17T07:12:55.807Z`), the form
 * `Date.prototype.toISOString` itself uses for years outside 0000–9999, rather than refused.
 */

const MS_PER_DAY = 86_400_000;
const DATE_RANGE_MS = 8.64e15;

/** `YYYY-MM-DD` for days since 1970-01-01 (proleptic Gregorian, as SQLite). */
export function isoDate(days: number): string {
  const [year, month, day] = civilFromDays(days);
  return `${yearText(year)}-${pad2(month)}-${pad2(day)}`;
}

/** `YYYY-MM-DDTHH:MM:SS.sssZ` for milliseconds since the epoch (UTC). */
export function isoTimestamp(ms: number | bigint): string {
  if (typeof ms === "number" && ms >= -DATE_RANGE_MS && ms <= DATE_RANGE_MS) return new Date(ms).toISOString();
  const big = BigInt(ms);
  const dayMs = BigInt(MS_PER_DAY);
  let days = big / dayMs;
  let rest = big % dayMs;
  if (rest < 0n) {
    days -= 1n;
    rest += dayMs;
  }
  // |days| < 2^63 / 86,400,000 ≈ 1.07e11: exact as a double.
  const msOfDay = Number(rest);
  const time = `${pad2(Math.floor(msOfDay / 3_600_000))}:${pad2(Math.floor(msOfDay / 60_000) % 60)}:${pad2(Math.floor(msOfDay / 1000) % 60)}`;
  return `${isoDate(Number(days))}T${time}.${String(msOfDay % 1000).padStart(3, "0")}Z`;
}

/** Four digits within 0000–9999, else a sign and at least six digits (ISO-8601 expanded years). */
function yearText(year: number): string {
  if (year >= 0 && year <= 9999) return String(year).padStart(4, "0");
  return (year < 0 ? "-" : "+") + String(Math.abs(year)).padStart(6, "0");
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** H. Hinnant's civil_from_days, the inverse of arrow/datetime.ts's daysFromCivil. */
function civilFromDays(days: number): [number, number, number] {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const mp = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return [yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day];
}

/**
 * `YYYY-MM-DDTHH:MM:SS.ffffff` for microseconds since the epoch, with `Z` for an instant
 * (Timestamp(µs, "UTC")) and without for a wall-clock time (Timestamp(µs) without a zone, which
 * names no instant). Always six fractional digits, the column's precision.
 */
export function isoMicroseconds(micros: bigint, utc: boolean): string {
  const exact = Number(micros);
  let ms: number | bigint;
  let below: number;
  if (Number.isSafeInteger(exact)) {
    ms = Math.floor(exact / 1000);
    below = exact - ms * 1000;
  } else {
    ms = micros / 1000n;
    let rest = micros % 1000n;
    if (rest < 0n) {
      ms -= 1n;
      rest += 1000n;
    }
    below = Number(rest);
  }
  const text = isoTimestamp(ms);
  return `${text.slice(0, -1)}${below < 10 ? "00" : below < 100 ? "0" : ""}${below}${utc ? "Z" : ""}`;
}
