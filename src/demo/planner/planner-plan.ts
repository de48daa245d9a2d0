/**
 * The demo planner's understanding of a request: a deterministic mapping from plain English
 * to calls of the demo tools. A request that asks for several things ("weather in Paris and
 * the time in Tokyo") becomes several calls, which the agent then runs in parallel.
 */
import type { PlannedCall, ToolSignature } from '../../executor/models/tool-request';
import { CALCULATOR_TOOL } from '../tools/calculator.tool';
import { EXPRESSION_NAMES } from '../tools/expression';
import { findCity, CITY_NAMES } from '../tools/places';
import { READ_DOC_TOOL } from '../tools/read-doc.tool';
import { SEARCH_DOCS_TOOL } from '../tools/search-docs.tool';
import { SLOW_TASK_TOOL } from '../tools/slow-task.tool';
import { WEATHER_TOOL } from '../tools/weather.tool';
import { WORLD_CLOCK_TOOL } from '../tools/world-clock.tool';


/** Where a request splits into separate asks, outside parentheses: "and", "then", ",", ";", "?". */
const SEPARATOR = /\s*(?:,?\s*\band then\b|,?\s*\band also\b|,?\s*\band\b|,?\s*\bthen\b|,?\s*\balso\b|[,;?]|\.(?=\s|$))\s*/iy;

export function splitClauses(text: string): string[] {
  const clauses: string[] = [];
  let depth = 0;
  let current = '';
  for (let i = 0; i < text.length; ) {
    const ch = text[i];
    if (depth === 0) {
      SEPARATOR.lastIndex = i;
      const sep = SEPARATOR.exec(text);
      if (sep && sep[0].length > 0 && /[a-z,;?.]/i.test(sep[0])) {
        clauses.push(current);
        current = '';
        i += sep[0].length;
        continue;
      }
    }
    if (ch === '(') depth++;
    if (ch === ')') depth = Math.max(0, depth - 1);
    current += ch;
    i++;
  }
  clauses.push(current);
  return clauses.map((c) => c.trim()).filter((c) => c.length > 0);
}

const PLACE_AFTER_PREPOSITION = /\b(?:in|at|for)\s+(?:the\s+)?([\p{L}][\p{L}\d\s./'_-]*?)\s*(?:right now|now|today|please)?[\s?.!]*$/iu;
const IANA_ZONE = /\b(?:UTC|GMT|[A-Z][A-Za-z_]+\/[A-Za-z_]+(?:\/[A-Za-z_]+)?)\b/;

/** The place a clause is about: after "in/at/for", a known city named anywhere, or an IANA zone. */
function placeIn(clause: string): string | undefined {
  const zone = IANA_ZONE.exec(clause);
  if (zone) return zone[0];
  const after = PLACE_AFTER_PREPOSITION.exec(clause);
  if (after) return after[1].trim();
  return CITY_NAMES.find((city) => new RegExp(`\\b${city}\\b`, 'i').test(clause));
}

/** A bare place ("and London"): what a clause that names nothing else may be. */
function barePlace(clause: string): string | undefined {
  const cleaned = clause.replace(/^(?:in|at|for|the)\s+/i, '').replace(/[?.!]+$/, '').trim();
  if (findCity(cleaned) || IANA_ZONE.test(cleaned)) return cleaned;
  return undefined;
}

const NUMBER_WORDS: Array<[RegExp, string]> = [
  [/\bsquare root of\s+/gi, 'sqrt '],
  [/\bto the power of\b/gi, '^'],
  [/\bmultiplied by\b|\btimes\b/gi, '*'],
  [/\bdivided by\b|\bover\b/gi, '/'],
  [/\bplus\b/gi, '+'],
  [/\bminus\b/gi, '-'],
  [/\bmod(?:ulo)?\b/gi, '%'],
  [/\bsquared\b/gi, '^2'],
  [/\bcubed\b/gi, '^3'],
  [/(\d)\s*x\s*(?=[\d(])/gi, '$1*'],
];

/** The arithmetic in a clause ("what's 12 times 7" → "12 * 7"), if it has any. */
function expressionIn(clause: string): string | undefined {
  let text = clause
    .replace(/^(?:please\s+)?(?:what(?:'s|’s| is)|calculate|compute|evaluate|how much is|work out|solve)\s+/i, '')
    .replace(/^the\s+/i, '')
    .replace(/[=?]+\s*$/, '')
    .trim();
  for (const [pattern, replacement] of NUMBER_WORDS) text = text.replace(pattern, replacement);
  text = text.replace(/\bsqrt\s+(\d+(?:\.\d+)?)/gi, 'sqrt($1)');
  if (!/\d/.test(text) || !/^[\d\s.+\-*/^%(),a-z×÷]+$/i.test(text)) return undefined;
  // Words are allowed only where they are functions or constants ("sqrt", "pi"), not prose.
  if ((text.match(/[a-z]+/gi) ?? []).some((w) => !EXPRESSION_NAMES.has(w.toLowerCase()))) return undefined;
  return text.replace(/\s+/g, ' ').trim();
}

/** Milliseconds asked for ("800 ms", "2 seconds"); one second when no duration is given. */
function durationIn(clause: string): number {
  const m = /(\d+(?:\.\d+)?)\s*(ms|millis(?:econds?)?|s|secs?|seconds?)\b/i.exec(clause);
  if (!m) return 1000;
  const value = Number(m[1]);
  return Math.round(/^m/i.test(m[2]) ? value : value * 1000);
}

type Intent = (clause: string) => PlannedCall | undefined;

const INTENTS: Array<[string, Intent]> = [
  [
    READ_DOC_TOOL,
    (c) => {
      const m = /\b(?:read|open|show)\b(?:\s+me)?(?:\s+the)?\s+(?:doc|document|page)\s+(?:named\s+|called\s+)?["“']?([\w./-]+)["”']?/i.exec(c);
      return m ? { name: READ_DOC_TOOL, args: { id: m[1] } } : undefined;
    },
  ],
  [
    SEARCH_DOCS_TOOL,
    (c) => {
      const m =
        /\bsearch\b(?:\s+(?:in|through))?(?:\s+the)?(?:\s+(?:docs|documentation|documents))?\s+(?:for|about|on)\s+(.+)$/i.exec(c) ??
        /\b(?:find|look up|lookup)\b\s+(?:the\s+)?(?:docs|documentation|documents)\s+(?:for|about|on)\s+(.+)$/i.exec(c) ??
        /\bsearch\b\s+(?!the\b)(.+)$/i.exec(c);
      return m ? { name: SEARCH_DOCS_TOOL, args: { query: m[1].replace(/[?.!]+$/, '').trim() } } : undefined;
    },
  ],
  [
    SLOW_TASK_TOOL,
    (c) =>
      /\b(?:slow|wait|sleep|pause)\b/i.test(c) ? { name: SLOW_TASK_TOOL, args: { ms: durationIn(c) } } : undefined,
  ],
  [
    WEATHER_TOOL,
    (c) => {
      if (!/\b(?:weather|temperature|forecast|raining|rain|sunny|hot|cold|warm)\b/i.test(c)) return undefined;
      const city = placeIn(c);
      return city ? { name: WEATHER_TOOL, args: { city } } : undefined;
    },
  ],
  [
    WORLD_CLOCK_TOOL,
    (c) => {
      if (!/\b(?:time|clock|o'clock|hour)\b/i.test(c)) return undefined;
      const place = placeIn(c);
      return place ? { name: WORLD_CLOCK_TOOL, args: { place } } : undefined;
    },
  ],
  [
    CALCULATOR_TOOL,
    (c) => {
      const expression = expressionIn(c);
      return expression ? { name: CALCULATOR_TOOL, args: { expression } } : undefined;
    },
  ],
];

/** A clause that names no tool repeats the previous ask with new details ("weather in Paris and London"). */
function followUp(previous: PlannedCall, clause: string): PlannedCall | undefined {
  switch (previous.name) {
    case WEATHER_TOOL: {
      const city = barePlace(clause);
      return city ? { name: WEATHER_TOOL, args: { city } } : undefined;
    }
    case WORLD_CLOCK_TOOL: {
      const place = barePlace(clause);
      return place ? { name: WORLD_CLOCK_TOOL, args: { place } } : undefined;
    }
    case SEARCH_DOCS_TOOL:
      return { name: SEARCH_DOCS_TOOL, args: { query: clause.replace(/[?.!]+$/, '') } };
    default:
      return undefined;
  }
}

const DELEGATION = /^\s*ask\s+([A-Za-z][\w-]*)\s*(?::\s*|\s+)(\S[\s\S]*)$/i;

/**
 * "ask <agent>: <question>" (or without the colon) for a tool that takes a `question` (a remote
 * agent): one call with the whole question, however many asks it holds, for that agent to plan.
 */
export function planDelegation(request: string, tools: readonly ToolSignature[]): PlannedCall[] | undefined {
  const m = DELEGATION.exec(request);
  if (!m) return undefined;
  const tool = tools.find((t) => t.name.toLowerCase() === m[1].toLowerCase() && t.parameters.properties?.question !== undefined);
  return tool ? [{ name: tool.name, args: { question: m[2].trim() } }] : undefined;
}

/** The tool calls a request asks for, in the order asked, restricted to the tools available. */
export function planToolCalls(request: string, available: ReadonlySet<string>): PlannedCall[] {
  const calls: PlannedCall[] = [];
  let previous: PlannedCall | undefined;
  for (const clause of splitClauses(request)) {
    let call: PlannedCall | undefined;
    for (const [name, intent] of INTENTS) {
      if (!available.has(name)) continue;
      call = intent(clause);
      if (call) break;
    }
    call ??= previous ? followUp(previous, clause) : undefined;
    if (call) {
      calls.push(call);
      previous = call;
    }
  }
  return calls;
}
