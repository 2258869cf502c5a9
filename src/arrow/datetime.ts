/**
 * ISO-8601 text → Date32 days and Timestamp milliseconds (ARCHITECTURE.md §5), read the way SQLite's
 * date functions read them: 'YYYY-MM-DD', then optionally 'T' or a space and 'HH:MM[:SS[.fff]]',
 * then optionally 'Z' or '±HH:MM'. Text without an offset is UTC, as in SQLite.
 *
 * Hand-written with charCodeAt because a Date column is parsed once per row of every result:
 * a regular expression or `Date.parse` costs several times more, and `Date.parse` also accepts
 * forms (and silently rolls over dates like Feb 30) that must not fit.
 */

const MS_PER_DAY = 86_400_000;

/** Days since 1970-01-01 for 'YYYY-MM-DD' naming a real calendar date; NaN otherwise. */
export function parseIsoDate(text: string): number {
  return text.length === 10 ? dateDays(text) : NaN;
}

/** Milliseconds since the epoch (UTC) for ISO-8601 text at millisecond precision; NaN otherwise. */
export function parseIsoTimestamp(text: string): number {
  return timestampFromDays(text, dateDays(text));
}

/**
 * The timestamp of text whose first 10 characters are the date `days` (NaN if they are not a date).
 * Split from the date so that a column can reuse the days of a repeated date prefix.
 */
export function timestampFromDays(text: string, days: number): number {
  const length = text.length;
  if (days !== days || length === 10) return days * MS_PER_DAY;
  const separator = text.charCodeAt(10);
  if (separator !== 84 /* T */ && separator !== 32 /* space */ && separator !== 116 /* t */) return NaN;
  if (length < 16 || text.charCodeAt(13) !== 58 /* : */) return NaN;
  const hours = twoDigits(text, 11);
  const minutes = twoDigits(text, 14);
  if (!(hours <= 23 && minutes <= 59)) return NaN;
  let ms = days * MS_PER_DAY + hours * 3_600_000 + minutes * 60_000;
  let i = 16;
  if (i < length && text.charCodeAt(i) === 58 /* : */) {
    const seconds = twoDigits(text, i + 1);
    if (!(seconds <= 59)) return NaN;
    ms += seconds * 1000;
    i += 3;
    if (i < length && text.charCodeAt(i) === 46 /* . */) {
      const fractionEnd = digitsEnd(text, i + 1);
      if (fractionEnd === i + 1) return NaN;
      let scale = 100;
      for (let j = i + 1; j < fractionEnd; j++) {
        const digit = text.charCodeAt(j) - 48;
        // Digits past the millisecond are only allowed as zeros: anything else would be rounded.
        if (scale >= 1) ms += digit * scale;
        else if (digit !== 0) return NaN;
        scale /= 10;
      }
      i = fractionEnd;
    }
  }
  if (i === length) return ms;
  const zone = text.charCodeAt(i);
  if ((zone === 90 /* Z */ || zone === 122 /* z */) && i + 1 === length) return ms;
  if ((zone === 43 /* + */ || zone === 45 /* - */) && i + 6 === length && text.charCodeAt(i + 3) === 58) {
    const offsetHours = twoDigits(text, i + 1);
    const offsetMinutes = twoDigits(text, i + 4);
    if (!(offsetHours <= 23 && offsetMinutes <= 59)) return NaN;
    const offset = (offsetHours * 60 + offsetMinutes) * 60_000;
    return zone === 43 ? ms - offset : ms + offset;
  }
  return NaN;
}

/** True when the text is a timestamp except for non-zero digits past the millisecond. */
export function hasSubMillisecondPrecision(text: string): boolean {
  const match = /^(\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}\.\d{3})(\d+)(.*)$/.exec(text);
  return match !== null && /[1-9]/.test(match[2] ?? "") && !Number.isNaN(parseIsoTimestamp(`${match[1]}${match[3]}`));
}

/** Days since the epoch of the 'YYYY-MM-DD' prefix of text; NaN if it is not a calendar date. */
export function dateDays(text: string): number {
  if (text.length < 10 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45) return NaN;
  const year = twoDigits(text, 0) * 100 + twoDigits(text, 2);
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  if (!(month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month))) return NaN;
  return daysFromCivil(year, month, day);
}

/** The value of two ASCII digits at i, or NaN (which fails every comparison). */
function twoDigits(text: string, i: number): number {
  const tens = text.charCodeAt(i) - 48;
  const ones = text.charCodeAt(i + 1) - 48;
  return tens >= 0 && tens <= 9 && ones >= 0 && ones <= 9 ? tens * 10 + ones : NaN;
}

function digitsEnd(text: string, i: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) break;
    i++;
  }
  return i;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Proleptic Gregorian calendar, as SQLite uses (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}
