/** The time last formatted, and its text. */
let lastMs = Number.NaN;
let lastText = '';
const DAY_MS = 86_400_000;
/** The UTC day last formatted in: its first millisecond, and its `YYYY-MM-DDT`. */
let dayStart = Number.NaN;
let dayText = '';
/** `00` to `99`. */
const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0'));

/**
 * `new Date(ms).toISOString()`, exactly, without calling it for every status and frame:
 * toISOString asks the time zone (ICU) as it formats, ~3-7 µs for a task's first status in the
 * server's profile. One millisecond's text is shared by every caller (a task's statuses, every
 * running task's tool frames); another millisecond of the same UTC day is written from that day's
 * date, and only a new day (or a time outside years 0-9999) calls toISOString.
 */
export function isoTime(ms: number): string {
  if (ms === lastMs) return lastText;
  let inDay = ms - dayStart;
  if (!(inDay >= 0 && inDay < DAY_MS && Number.isInteger(ms))) {
    const text = new Date(ms).toISOString();
    // Years 0-9999 read YYYY-MM-DDTHH:mm:ss.sssZ; others (±YYYYYY) are not cached.
    if (text.length !== 24 || !Number.isInteger(ms)) return text;
    dayStart = Math.floor(ms / DAY_MS) * DAY_MS;
    dayText = text.slice(0, 11);
    inDay = ms - dayStart;
  }
  const milli = inDay % 1000;
  const seconds = (inDay - milli) / 1000;
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor(seconds / 60) % 60;
  // One flat string (a join, not a `+`), as toISOString's is: statuses and frames are kept and written.
  lastText = [dayText, TWO_DIGITS[hours], ':', TWO_DIGITS[minutes], ':', TWO_DIGITS[seconds % 60], '.', String(Math.floor(milli / 100)), TWO_DIGITS[milli % 100], 'Z'].join('');
  lastMs = ms;
  return lastText;
}
