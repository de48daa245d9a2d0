import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { throwIfAborted } from '../../executor/abortable';
import { findCity } from './places';

export const WORLD_CLOCK_TOOL = 'world_clock';

export interface WorldClockReading {
  place: string;
  timeZone: string;
  /** 24-hour local time, "HH:MM". */
  time: string;
  /** e.g. "Tuesday 2 June 2026". */
  date: string;
  /** e.g. "GMT+9". */
  utcOffset: string;
}

/** Accepts a known city or any IANA zone (`Europe/Paris`, `UTC`); Intl rejects the rest. */
function resolveTimeZone(place: string): { place: string; timeZone: string } {
  const city = findCity(place);
  if (city) return { place: city.name, timeZone: city.timeZone };
  try {
    const timeZone = new Intl.DateTimeFormat('en-GB', { timeZone: place.trim() }).resolvedOptions().timeZone;
    return { place: place.trim(), timeZone };
  } catch {
    throw new Error(`unknown city or time zone "${place}" (try a city such as Tokyo, or an IANA zone such as Asia/Tokyo)`);
  }
}

/** The time now in a city or time zone, read through Intl. `now` is injectable for tests. */
export function createWorldClockTool(now: () => Date = () => new Date()) {
  return tool(
    ({ place }, config): WorldClockReading => {
      throwIfAborted(config?.signal);
      const resolved = resolveTimeZone(place);
      const at = now();
      const part = (options: Intl.DateTimeFormatOptions): string =>
        new Intl.DateTimeFormat('en-GB', { timeZone: resolved.timeZone, ...options }).format(at);
      const offset = new Intl.DateTimeFormat('en-GB', { timeZone: resolved.timeZone, timeZoneName: 'shortOffset' })
        .formatToParts(at)
        .find((p) => p.type === 'timeZoneName')?.value;
      return {
        ...resolved,
        time: part({ hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }),
        date: part({ weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' }).replace(',', ''),
        utcOffset: offset ?? 'GMT',
      };
    },
    {
      name: WORLD_CLOCK_TOOL,
      description: 'The current local time in a city or an IANA time zone.',
      schema: z.object({ place: z.string().min(1).describe('A city ("Tokyo") or an IANA zone ("Asia/Tokyo")') }),
    },
  );
}
