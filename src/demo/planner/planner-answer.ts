/**
 * The demo planner's final answer: one readable sentence per tool outcome, failures included,
 * written from the tools' structured results.
 */
import { CALCULATOR_TOOL } from '../tools/calculator.tool';
import { READ_DOC_TOOL } from '../tools/read-doc.tool';
import { SEARCH_DOCS_TOOL } from '../tools/search-docs.tool';
import { SLOW_TASK_TOOL } from '../tools/slow-task.tool';
import { WEATHER_TOOL } from '../tools/weather.tool';
import { WORLD_CLOCK_TOOL } from '../tools/world-clock.tool';
import type { ToolOutcome } from '../../executor/models/offline-chat-model';
import { summarizeOutcome } from '../../executor/models/tool-request';

export const PLANNER_HELP =
  'I can check the weather in a city, tell the time anywhere, do arithmetic, search and read the toolstream docs, ' +
  'or take a deliberately slow step. Try: "weather in Paris and the time in Tokyo", "what\'s 12*7", ' +
  '"search the docs for replay" or "take a slow step of 800 ms".';

type Fields = Record<string, unknown>;

const record = (v: unknown): Fields => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Fields) : {});
const text = (v: unknown, fallback = '?'): string =>
  typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : fallback;
const withoutStop = (s: string): string => s.replace(/[.\s]+$/, '');
const READ_DOC_PREVIEW = 280;

function success(o: ToolOutcome): string {
  const v = record(o.value);
  switch (o.name) {
    case WEATHER_TOOL:
      return `${text(v.city)}: ${text(v.condition)}, ${text(v.temperatureC)} °C (humidity ${text(v.humidityPercent)}%, wind ${text(v.windKph)} km/h).`;
    case WORLD_CLOCK_TOOL:
      return `In ${text(v.place)} it is ${text(v.time)} (${text(v.date)}, ${text(v.utcOffset)}).`;
    case CALCULATOR_TOOL:
      return `${text(v.expression)} = ${text(v.value)}.`;
    case SEARCH_DOCS_TOOL: {
      const results = Array.isArray(v.results) ? v.results.map(record) : [];
      if (results.length === 0) return `Nothing in the docs matches "${text(v.query)}".`;
      const list = results.map((r) => `"${text(r.title)}" (${text(r.id)})`).join(', ');
      return `Docs about "${text(v.query)}": ${list}. Best match: ${withoutStop(text(results[0].snippet, ''))}.`;
    }
    case READ_DOC_TOOL: {
      const content = text(v.content, '').replace(/\s+/g, ' ');
      const preview = content.length > READ_DOC_PREVIEW ? `${content.slice(0, READ_DOC_PREVIEW)}…` : content;
      return `"${text(v.title)}" (${text(v.id)}): ${preview}`;
    }
    case SLOW_TASK_TOOL:
      return v.capped === true
        ? `Finished the ${text(v.label)} after ${text(v.waitedMs)} ms (capped from ${text(v.requestedMs)} ms).`
        : `Finished the ${text(v.label)} after ${text(v.waitedMs)} ms.`;
    default:
      return summarizeOutcome(o);
  }
}

function failure(o: ToolOutcome): string {
  const a = o.args;
  const what = (() => {
    switch (o.name) {
      case WEATHER_TOOL:
        return `I could not get the weather for ${text(a.city)}`;
      case WORLD_CLOCK_TOOL:
        return `I could not tell the time in ${text(a.place)}`;
      case CALCULATOR_TOOL:
        return `I could not calculate ${text(a.expression)}`;
      case SEARCH_DOCS_TOOL:
        return `The docs search for "${text(a.query)}" failed`;
      case READ_DOC_TOOL:
        return `I could not read the doc "${text(a.id)}"`;
      case SLOW_TASK_TOOL:
        return 'The slow step did not finish';
      default:
        return undefined;
    }
  })();
  if (what === undefined) return summarizeOutcome(o);
  return `${what}: ${withoutStop(o.error ?? 'unknown error')}.`;
}

/** The answer to a request from what its tools returned, in the order the results came. */
export function composeAnswer(outcomes: readonly ToolOutcome[]): string {
  if (outcomes.length === 0) return PLANNER_HELP;
  return outcomes.map((o) => (o.ok ? success(o) : failure(o))).join(' ');
}
