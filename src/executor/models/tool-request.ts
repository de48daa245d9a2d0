/**
 * The offline model's reading of a request that names tools: "stock_price ticker=ACME" or
 * `stock_price {"ticker":"ACME"}`, several clauses joined by "and". Pure functions over the
 * tools' JSON schemas, so the same reading serves any tool a host registers.
 */
import type { ToolOutcome } from './offline-chat-model';

export interface PlannedCall {
  name: string;
  args: Record<string, unknown>;
}

interface PropertySchema {
  type?: string | string[];
  description?: string;
}

/** What a model sees of a bound tool. */
export interface ToolSignature {
  name: string;
  description: string;
  parameters: { properties?: Record<string, PropertySchema>; required?: string[] };
}

type Fields = Record<string, unknown>;
const isRecord = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Splits on " and " outside quotes, braces and brackets. */
export function splitOnAnd(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') depth = Math.max(0, depth - 1);
    else if (depth === 0 && /\s/.test(ch)) {
      const m = /^\s+and\s+/i.exec(text.slice(i));
      if (m) {
        parts.push(text.slice(start, i));
        i += m[0].length - 1;
        start = i + 1;
      }
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

/** The end of a JSON value opening at `from` ({…} or […]), quotes respected; -1 if unbalanced. */
function balancedEnd(text: string, from: number): number {
  let depth = 0;
  let inString = false;
  for (let i = from; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

const KEY = /^([A-Za-z_][\w.-]*)\s*=\s*/;
const NEXT_KEY = /\s+[A-Za-z_][\w.-]*\s*=/;
const NUMBER = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function typesOf(schema: PropertySchema | undefined): string[] {
  if (!schema?.type) return [];
  return Array.isArray(schema.type) ? schema.type : [schema.type];
}

/** An unquoted value read as the type the schema asks for; left a string when it is not one (the tool then names it). */
function coerce(raw: string, schema: PropertySchema | undefined): unknown {
  for (const type of typesOf(schema)) {
    if ((type === 'number' || type === 'integer') && NUMBER.test(raw)) return Number(raw);
    if (type === 'boolean' && /^(?:true|false)$/i.test(raw)) return raw.toLowerCase() === 'true';
    if (type === 'null' && raw === 'null') return null;
  }
  return raw;
}

/** `key=value …`: values quoted, JSON, or plain text up to the next `key=`; undefined if it is not that form. */
function parsePairs(text: string, properties: Record<string, PropertySchema>): Fields | undefined {
  const args: Fields = {};
  let rest = text;
  while (rest !== '') {
    const key = KEY.exec(rest);
    if (!key) return undefined;
    rest = rest.slice(key[0].length);
    const name = key[1];
    let value: unknown;
    if (rest.startsWith('"') || rest.startsWith("'")) {
      const q = rest[0];
      let end = 1;
      while (end < rest.length && rest[end] !== q) end += rest[end] === '\\' ? 2 : 1;
      if (end >= rest.length) return undefined;
      const body = rest.slice(1, end);
      value = q === '"' ? safeJson(`"${body}"`) ?? body : body.replace(/\\'/g, "'");
      rest = rest.slice(end + 1);
    } else if (rest.startsWith('{') || rest.startsWith('[')) {
      const end = balancedEnd(rest, 0);
      if (end < 0) return undefined;
      value = safeJson(rest.slice(0, end));
      if (value === undefined) return undefined;
      rest = rest.slice(end);
    } else {
      const next = NEXT_KEY.exec(rest);
      const raw = (next ? rest.slice(0, next.index) : rest).trim();
      value = coerce(raw, properties[name]);
      rest = next ? rest.slice(next.index) : '';
    }
    if (rest !== '' && !/^\s/.test(rest)) return undefined;
    rest = rest.trim();
    args[name] = value;
  }
  return args;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** One clause: a tool's name, then nothing, `key=value` pairs or a JSON object. */
export function parseToolClause(clause: string, tools: readonly ToolSignature[]): PlannedCall | undefined {
  const byLength = [...tools].sort((a, b) => b.name.length - a.name.length);
  const tool = byLength.find((t) => clause.toLowerCase().startsWith(t.name.toLowerCase()) && /^(?:$|[\s{])/.test(clause.slice(t.name.length)));
  if (!tool) return undefined;
  let rest = clause.slice(tool.name.length).trim();
  if (!/["'}\]]$/.test(rest)) rest = rest.replace(/[?!.]+$/, '').trim();
  if (rest === '') return { name: tool.name, args: {} };
  if (rest.startsWith('{')) {
    const args = safeJson(rest);
    return isRecord(args) ? { name: tool.name, args } : undefined;
  }
  const args = parsePairs(rest, tool.parameters.properties ?? {});
  return args ? { name: tool.name, args } : undefined;
}

/** Every clause of the request as a tool call, or undefined when any clause is not one. */
export function parseToolRequest(request: string, tools: readonly ToolSignature[]): PlannedCall[] | undefined {
  const clauses = splitOnAnd(request.trim());
  if (clauses.length === 0) return undefined;
  const calls: PlannedCall[] = [];
  for (const clause of clauses) {
    const call = parseToolClause(clause, tools);
    if (!call) return undefined;
    calls.push(call);
  }
  return calls;
}

function typeLabel(schema: PropertySchema | undefined): string {
  const types = typesOf(schema);
  return types.length > 0 ? types.join(' | ') : 'any';
}

/** `name(arg: type, optional?: type): description` for each tool. */
export function describeTools(tools: readonly ToolSignature[]): string {
  if (tools.length === 0) return 'I have no tools to call.';
  const lines = tools.map((t) => {
    const required = new Set(t.parameters.required ?? []);
    const args = Object.entries(t.parameters.properties ?? {}).map(([name, s]) => `${name}${required.has(name) ? '' : '?'}: ${typeLabel(s)}`);
    return `- ${t.name}(${args.join(', ')})${t.description ? `: ${t.description}` : ''}`;
  });
  const example = tools[0];
  const firstArg = Object.keys(example.parameters.properties ?? {})[0];
  return [
    "I call tools by name: start with a tool's name and give its arguments as key=value pairs or a JSON object; " +
      `join several with "and" to run them in parallel (e.g. "${example.name}${firstArg ? ` ${firstArg}=…` : ''}").`,
    'Tools:',
    ...lines,
  ].join('\n');
}

const MAX_SUMMARY = 300;
const MAX_ITEMS = 5;

function plain(value: unknown, depth = 0): string {
  if (value === null || value === undefined) return 'nothing';
  if (typeof value === 'string') return value;
  if (typeof value !== 'object') return String(value);
  if (depth > 0) return JSON.stringify(value) ?? '';
  if (Array.isArray(value)) {
    const shown = value.slice(0, MAX_ITEMS).map((v) => plain(v, depth + 1));
    const more = value.length > MAX_ITEMS ? ` and ${value.length - MAX_ITEMS} more` : '';
    return value.length === 0 ? 'none' : `${shown.join(', ')}${more}`;
  }
  const entries = Object.entries(value as Fields);
  return entries.length === 0 ? 'nothing' : entries.map(([k, v]) => `${k} ${plain(v, depth + 1)}`).join(', ');
}

const capped = (s: string): string => (s.length > MAX_SUMMARY ? `${s.slice(0, MAX_SUMMARY)}…` : s);
const withoutStop = (s: string): string => s.replace(/[.\s]+$/, '');

/** One plain sentence for an outcome: what the tool returned, or why it failed. */
export function summarizeOutcome(o: ToolOutcome): string {
  return o.ok ? `${o.name}: ${withoutStop(capped(plain(o.value)))}.` : `${o.name} failed: ${withoutStop(capped(o.error ?? 'unknown error'))}.`;
}

/** The answer from the tools' results, one sentence each, in the order they came. */
export function summarizeOutcomes(outcomes: readonly ToolOutcome[]): string {
  if (outcomes.length === 0) return 'No tool was called.';
  return outcomes.map(summarizeOutcome).join(' ');
}
