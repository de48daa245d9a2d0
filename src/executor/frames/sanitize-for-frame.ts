/**
 * Frame hygiene: whatever a model or a tool hands us, what goes on the wire is JSON-safe,
 * capped per field and free of secrets. Pure functions, no Nest, no LangGraph state.
 */
import { BaseMessage } from '@langchain/core/messages';
import type { ToolCallArtifactData, ToolCallFrameBase } from '../../extensions';

export interface FrameHygieneOptions {
  /** Cap on the JSON size (UTF-8 bytes) of each of `args`, `result`, `error`. Default 16 KiB. */
  maxFieldBytes?: number;
  /**
   * Keys whose values become `"[redacted]"`, at any depth. Replaces the default list
   * (spread `DEFAULT_REDACT_KEYS` to extend it). Matching ignores case and anything not a
   * letter or digit (`_`, `-`, spaces), and also hits keys that end with an entry
   * (`githubToken`, `db_password`, `x-api-key`).
   */
  redactKeys?: readonly string[];
}

export const DEFAULT_MAX_FIELD_BYTES = 16 * 1024;
/** Below this a field could not even hold a truncation marker. */
export const MIN_MAX_FIELD_BYTES = 256;

export const DEFAULT_REDACT_KEYS: readonly string[] = [
  'password',
  'passwd',
  'pwd',
  'passphrase',
  'secret',
  'token',
  'apiKey',
  'api_key',
  'authorization',
  'auth',
  'cookie',
  'set-cookie',
  'accessToken',
  'refreshToken',
  'idToken',
  'privateKey',
  'clientSecret',
  'sessionId',
  'credentials',
];

export const REDACTED = '[redacted]';
export const CIRCULAR = '[circular]';
export const UNREADABLE = '[unreadable]';
const MAX_DEPTH = 32;
/** Room kept free in a container for its truncation marker. */
const MARKER_RESERVE = 48;
/** Strings up to this length count as small values when an object's budget is shared. */
const SHORT_STRING = 128;

const normaliseKey = (key: string): string => key.toLowerCase().replace(/[^a-z0-9]/g, '');

/** The marker that replaces the tail of a cut string. */
export function truncationMarker(totalBytes: number): string {
  return `…[truncated: ${totalBytes} bytes]`;
}

const utf8Bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/**
 * UTF-8 size of a string's JSON. Keys, ids and names are nearly always printable ASCII with
 * nothing to escape, whose JSON is the string and two quotes: counted without building it.
 */
function jsonBytes(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return utf8Bytes(JSON.stringify(s));
  }
  return s.length + 2;
}

/**
 * Whether a string's JSON takes at most `maxBytes`. A UTF-16 unit takes at most 6 bytes of JSON
 * (`\u001f`, a lone surrogate), so a short string fits without being scanned: an id or a tool
 * name, on every frame.
 */
function jsonFits(s: string, maxBytes: number): boolean {
  return s.length * 6 + 2 <= maxBytes || jsonBytes(s) <= maxBytes;
}

/** A sanitised value and the exact UTF-8 size of its JSON. */
interface Fitted {
  value: unknown;
  bytes: number;
}
/** The value cannot be represented in the budget left, not even truncated. */
const TOO_BIG = Symbol('too big');
/** The value has no JSON form (undefined, a function, a symbol): omitted, like JSON.stringify does. */
const NO_JSON = Symbol('no json');
type Walked = Fitted | typeof TOO_BIG | typeof NO_JSON;

/** Bound on the verdicts remembered per redaction list, so hostile key names cannot grow it. */
const MAX_REMEMBERED_KEYS = 4096;

/** A key's verdict in RedactionPolicy: its value is redacted. */
const SECRET_KEY = -1;

/**
 * A redaction list, normalised once, with the verdict for each key name remembered: the same
 * few keys come back in every frame, and normalising and matching them each time was most of
 * a small frame's cost. The verdict of a key that is not secret is the size of its JSON, which
 * `cleanBytes` needs for every key of every frame: one lookup gives both.
 */
class RedactionPolicy {
  private readonly entries: string[];
  /** SECRET_KEY, or the key's JSON size. */
  private readonly verdicts = new Map<string, number>();

  constructor(redactKeys: readonly string[]) {
    this.entries = redactKeys.map(normaliseKey).filter((k) => k.length > 0);
  }

  isSecret(key: string): boolean {
    return this.keyBytes(key) === SECRET_KEY;
  }

  /** SECRET_KEY when the key's value is redacted, else the UTF-8 size of the key's JSON. */
  keyBytes(key: string): number {
    let verdict = this.verdicts.get(key);
    if (verdict === undefined) {
      const k = normaliseKey(key);
      verdict = this.entries.some((entry) => k === entry || k.endsWith(entry)) ? SECRET_KEY : jsonBytes(key);
      if (this.verdicts.size >= MAX_REMEMBERED_KEYS) this.verdicts.clear();
      this.verdicts.set(key, verdict);
    }
    return verdict;
  }
}

/** One policy per redaction list (options are resolved once, so the same array comes back). */
const policies = new WeakMap<readonly string[], RedactionPolicy>();
/** The list asked for last and its policy: every frame of a server asks with the same list, and a WeakMap lookup per frame is a hash probe. */
let lastRedactKeys: readonly string[] | undefined;
let lastPolicy: RedactionPolicy | undefined;

function redactionPolicy(redactKeys: readonly string[]): RedactionPolicy {
  if (redactKeys === lastRedactKeys && lastPolicy) return lastPolicy;
  let policy = policies.get(redactKeys);
  if (!policy) {
    policy = new RedactionPolicy(redactKeys);
    policies.set(redactKeys, policy);
  }
  lastRedactKeys = redactKeys;
  lastPolicy = policy;
  return policy;
}

class FrameSanitizer {
  /**
   * Objects on the current path, to tell a cycle from a shared reference. An array: the path is
   * at most MAX_DEPTH long, and a Set per field (every frame has one or two) and its rehashing
   * as it emptied were a sixth of what the executor allocated per frame.
   */
  private readonly ancestors: object[] = [];

  constructor(private readonly redaction: RedactionPolicy) {}

  /** Not inside a walk: no object on the path. */
  get idle(): boolean {
    return this.ancestors.length === 0;
  }

  isSecretKey(key: string): boolean {
    return this.redaction.isSecret(key);
  }

  walk(value: unknown, depth: number, budget: number): Walked {
    switch (typeof value) {
      case 'string':
        return fitString(value, budget);
      case 'number':
        return fitText(Number.isFinite(value) ? JSON.stringify(value) : 'null', budget, Number.isFinite(value) ? value : null);
      case 'boolean':
        return fitText(String(value), budget, value);
      case 'bigint':
        return fitString(value.toString(), budget);
      case 'undefined':
      case 'function':
      case 'symbol':
        return NO_JSON;
      default:
        return value === null ? fitText('null', budget, null) : this.walkObject(value as object, depth, budget);
    }
  }

  private walkObject(value: object, depth: number, budget: number): Walked {
    if (this.ancestors.includes(value)) return fitString(CIRCULAR, budget);
    if (depth >= MAX_DEPTH) return fitString('[truncated: nested too deep]', budget);
    this.ancestors.push(value);
    try {
      return this.walkKnownObject(value, depth, budget);
    } catch {
      // Throwing getters, hostile proxies: the value is reported, never propagated.
      return fitString(UNREADABLE, budget);
    } finally {
      this.ancestors.pop();
    }
  }

  private walkKnownObject(value: object, depth: number, budget: number): Walked {
    // A LangChain message stands for its content, not for its serialised constructor form.
    if (BaseMessage.isInstance(value)) return this.walk(value.content, depth + 1, budget);
    if (value instanceof Error) return fitString(value.message, budget);
    if (ArrayBuffer.isView(value)) return fitString(`[${value.constructor.name}: ${value.byteLength} bytes]`, budget);
    if (value instanceof Map) {
      return this.walkEntries(
        Array.from(value.entries(), ([k, v]) => [String(k), v] as [string, unknown]),
        depth,
        budget,
      );
    }
    if (value instanceof Set) return this.walkArray(Array.from(value), depth, budget);
    if (Array.isArray(value)) return this.walkArray(value, depth, budget);
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    // LangChain Serializable objects have a toJSON that yields constructor records; skip it.
    if (typeof toJSON === 'function' && !('lc_namespace' in value)) {
      return this.walk(toJSON.call(value), depth + 1, budget);
    }
    const keys = Object.keys(value);
    // Each value read once (a getter runs once).
    const values = keys.map((k) => (value as Record<string, unknown>)[k]);
    return (
      this.walkSmallObject(keys, values, depth, budget) ??
      this.walkEntries(
        keys.map((k, i) => [k, values[i]] as [string, unknown]),
        depth,
        budget,
      )
    );
  }

  /**
   * What walkEntries does for an object of small values only (the usual tool arguments and
   * results), without its entry tuples, closures and second pass: each entry placed in its
   * order. Undefined when some value is not small (then walkEntries shares the budget).
   */
  private walkSmallObject(keys: readonly string[], values: readonly unknown[], depth: number, budget: number): Walked | undefined {
    for (let i = 0; i < keys.length; i++) {
      const raw = values[i];
      const large = typeof raw === 'string' ? raw.length > SHORT_STRING : typeof raw === 'object' && raw !== null;
      if (large && !this.isSecretKey(keys[i])) return undefined;
    }
    if (budget < 2) return TOO_BIG;
    const out: Record<string, unknown> = {};
    let used = 2;
    let count = 0;
    let omitted = 0;
    let complete = true;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const sep = count > 0 ? 1 : 0;
      const keyBytes = jsonBytes(key) + 1;
      const available = budget - used - sep - keyBytes - MARKER_RESERVE;
      const child = this.isSecretKey(key) ? fitString(REDACTED, available) : this.walk(values[i], depth + 1, available);
      if (child === TOO_BIG) {
        complete = false;
        break;
      }
      if (child === NO_JSON) {
        omitted++;
        continue;
      }
      define(out, key, child.value);
      used += sep + keyBytes + child.bytes;
      count++;
    }
    if (!complete) {
      const marker = `[truncated: ${keys.length - count - omitted} more keys]`;
      define(out, '…', marker);
      used += (count > 0 ? 1 : 0) + jsonBytes('…') + 1 + jsonBytes(marker);
    }
    return used <= budget ? { value: out, bytes: used } : TOO_BIG;
  }

  private walkArray(items: readonly unknown[], depth: number, budget: number): Walked {
    if (budget < 2) return TOO_BIG;
    const out: unknown[] = [];
    let used = 2;
    for (let i = 0; i < items.length; i++) {
      const sep = out.length > 0 ? 1 : 0;
      let child = this.walk(items[i], depth + 1, budget - used - sep - MARKER_RESERVE);
      if (child === NO_JSON) child = { value: null, bytes: 4 };
      if (child === TOO_BIG) {
        const marker = `…[truncated: ${items.length - i} more items]`;
        out.push(marker);
        used += sep + jsonBytes(marker);
        break;
      }
      out.push(child.value);
      used += sep + child.bytes;
    }
    return used <= budget ? { value: out, bytes: used } : TOO_BIG;
  }

  /**
   * An object's entries, in their order. When they do not all fit, small values (scalars,
   * short strings, redacted secrets) are placed first, then the larger ones share what is
   * left, each taking at most an equal part of it, so one huge field cannot crowd out its
   * siblings. What still does not fit is counted in a `"…"` entry at the end.
   */
  private walkEntries(entries: readonly [string, unknown][], depth: number, budget: number): Walked {
    if (budget < 2) return TOO_BIG;
    const placed = new Array<Fitted | undefined>(entries.length);
    let used = 2;
    let count = 0;
    let omitted = 0;
    const place = (i: number, room: (keyBytes: number, sep: number) => number): boolean => {
      const [key, raw] = entries[i];
      const sep = count > 0 ? 1 : 0;
      const keyBytes = jsonBytes(key) + 1;
      const available = room(keyBytes, sep);
      const child = this.isSecretKey(key) ? fitString(REDACTED, available) : this.walk(raw, depth + 1, available);
      if (child === TOO_BIG) return false;
      if (child === NO_JSON) {
        omitted++;
        return true;
      }
      placed[i] = child;
      used += sep + keyBytes + child.bytes;
      count++;
      return true;
    };
    const small = (i: number): boolean => {
      const [key, raw] = entries[i];
      if (this.isSecretKey(key)) return true;
      if (typeof raw === 'string') return raw.length <= SHORT_STRING;
      return typeof raw !== 'object' || raw === null;
    };
    // Most objects hold only small values: then every entry is placed in its order, as below,
    // without the sorting arrays (every frame's args and result pass here).
    if (entries.every((_, i) => small(i))) {
      let allPlaced = true;
      for (let i = 0; i < entries.length && allPlaced; i++) {
        allPlaced = place(i, (keyBytes, sep) => budget - used - sep - keyBytes - MARKER_RESERVE);
      }
      return this.assemble(entries, placed, allPlaced, used, count, omitted, budget);
    }
    const order = entries.map((_, i) => i);
    const smallOnes = order.filter(small);
    const largeOnes = order.filter((i) => !small(i));
    let complete = smallOnes.every((i) => place(i, (keyBytes, sep) => budget - used - sep - keyBytes - MARKER_RESERVE));
    if (complete) {
      complete = largeOnes.every((i, n) =>
        place(i, (keyBytes, sep) => Math.floor((budget - used - MARKER_RESERVE) / (largeOnes.length - n)) - sep - keyBytes),
      );
    }
    return this.assemble(entries, placed, complete, used, count, omitted, budget);
  }

  /** The object of the placed entries, in their order, with the count of those left out when not complete. */
  private assemble(
    entries: readonly [string, unknown][],
    placed: readonly (Fitted | undefined)[],
    complete: boolean,
    used: number,
    count: number,
    omitted: number,
    budget: number,
  ): Walked {
    const out: Record<string, unknown> = {};
    placed.forEach((child, i) => child && define(out, entries[i][0], child.value));
    if (!complete) {
      const marker = `[truncated: ${entries.length - count - omitted} more keys]`;
      define(out, '…', marker);
      used += (count > 0 ? 1 : 0) + jsonBytes('…') + 1 + jsonBytes(marker);
    }
    return used <= budget ? { value: out, bytes: used } : TOO_BIG;
  }
}

/**
 * Own data property, also for `__proto__`, which plain assignment would read as the prototype
 * (the only key of a fresh object that does: defineProperty for every key was a tenth of a
 * frame's cost).
 */
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

function fitText(json: string, budget: number, value: unknown): Walked {
  return json.length <= budget ? { value, bytes: json.length } : TOO_BIG;
}

/** The string itself if it fits, else its longest prefix that fits with the marker after it. */
function fitString(s: string, budget: number): Walked {
  // Every character costs at least one byte in JSON, so only a short string can fit whole.
  if (s.length + 2 <= budget) {
    const bytes = jsonBytes(s);
    if (bytes <= budget) return { value: s, bytes };
  }
  const marker = truncationMarker(utf8Bytes(s));
  if (jsonBytes(marker) > budget) return TOO_BIG;
  let lo = 0;
  let hi = Math.min(s.length, budget);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (jsonBytes(s.slice(0, mid) + marker) <= budget) lo = mid;
    else hi = mid - 1;
  }
  // Never leave half of a surrogate pair at the cut.
  const code = s.charCodeAt(lo - 1);
  const cut = lo > 0 && code >= 0xd800 && code <= 0xdbff ? lo - 1 : lo;
  const value = s.slice(0, cut) + marker;
  return { value, bytes: jsonBytes(value) };
}

/** One sanitizer per redaction list, reused: its path is empty between calls. */
const sanitizers = new WeakMap<RedactionPolicy, FrameSanitizer>();

/** The policy's sanitizer, or a fresh one for a call made while it walks (a toJSON that sanitises). */
function sanitizerFor(policy: RedactionPolicy): FrameSanitizer {
  let sanitizer = sanitizers.get(policy);
  if (!sanitizer) {
    sanitizer = new FrameSanitizer(policy);
    sanitizers.set(policy, sanitizer);
  }
  return sanitizer.idle ? sanitizer : new FrameSanitizer(policy);
}

function resolveMaxBytes(options?: FrameHygieneOptions): number {
  return Math.max(options?.maxFieldBytes ?? DEFAULT_MAX_FIELD_BYTES, MIN_MAX_FIELD_BYTES);
}

/**
 * Makes any value safe for a frame field: JSON-safe (cycles, BigInt, class instances, Maps,
 * errors and LangChain messages turned into plain data), secrets under redaction keys replaced
 * by `"[redacted]"` at any depth, and the whole capped at `maxFieldBytes` of JSON, with
 * visible `…[truncated: …]` markers where something was cut. `undefined` stays `undefined`
 * (the field is then omitted). Never throws.
 */
export function sanitizeForFrame(value: unknown, options?: FrameHygieneOptions): unknown {
  const budget = resolveMaxBytes(options);
  const walked = sanitizerFor(redactionPolicy(options?.redactKeys ?? DEFAULT_REDACT_KEYS)).walk(value, 0, budget);
  if (walked === NO_JSON) return undefined;
  // Unreachable with a budget of MIN_MAX_FIELD_BYTES or more; kept total for safety.
  if (walked === TOO_BIG) return '[truncated]';
  return walked.value;
}

/** A string field (`error`, ids, names) capped at `maxBytes` of JSON. */
function capString(s: string, maxBytes: number): string {
  const fitted = fitString(s, maxBytes);
  return typeof fitted === 'object' ? String(fitted.value) : '[truncated]';
}

/**
 * A new frame holding only the contract's fields, each made safe by `sanitizeForFrame`;
 * `error` stays a string.
 */
export function sanitizeFrame(frame: ToolCallArtifactData, options?: FrameHygieneOptions): ToolCallArtifactData {
  const payload = frame.phase === 'started' ? frame.args : frame.phase === 'completed' ? frame.result : frame.error;
  return sanitizedFrameOf(frame.toolCallId, frame.name, frame.parentToolCallId, frame.timestamp, frame.phase, payload, options);
}

/**
 * What `sanitizeFrame` makes of the frame with these fields (`payload`: the phase's `args`,
 * `result` or `error`), built without a frame to copy: the executor makes every frame here.
 * `owned`: nothing else holds the payload (a tool's result just parsed from its JSON text), so
 * when sanitising would give back an equal value, it goes on as it is instead of as a copy.
 */
export function sanitizedFrameOf(
  toolCallId: string,
  name: string,
  parentToolCallId: string | undefined,
  timestamp: string | undefined,
  phase: ToolCallArtifactData['phase'],
  payload: unknown,
  options?: FrameHygieneOptions,
  owned = false,
): ToolCallArtifactData {
  const maxBytes = resolveMaxBytes(options);
  // Built field by field in wire order (no spreads: they were a fifth of a frame's cost).
  const out: ToolCallFrameBase & { phase?: ToolCallArtifactData['phase']; args?: unknown; result?: unknown; error?: string } = {
    toolCallId: capString(toolCallId, maxBytes),
    name: capString(name, maxBytes),
  };
  if (parentToolCallId !== undefined) out.parentToolCallId = capString(parentToolCallId, maxBytes);
  if (timestamp !== undefined) out.timestamp = timestamp;
  out.phase = phase;
  switch (phase) {
    case 'started': {
      const args = sanitizeForFrame(payload, options);
      if (args !== undefined) out.args = args;
      break;
    }
    case 'completed': {
      const result = owned && isCleanValue(payload, maxBytes, options) ? payload : sanitizeForFrame(payload, options);
      if (result !== undefined) out.result = result;
      break;
    }
    case 'failed':
      if (payload !== undefined) out.error = capString(payload as string, maxBytes);
      break;
  }
  return out as ToolCallArtifactData;
}

/** Whether `sanitizeForFrame(value, options)` would give back a value equal to this one (see `cleanBytes`). */
function isCleanValue(value: unknown, maxBytes: number, options?: FrameHygieneOptions): boolean {
  const bytes = cleanBytes(value, 0, redactionPolicy(options?.redactKeys ?? DEFAULT_REDACT_KEYS));
  return bytes !== NOT_CLEAN && bytes <= maxBytes;
}

/** Longest JSON of a finite number that is not a safe integer (e.g. `-0.0000012345678901234567`). */
const MAX_NUMBER_JSON = 25;
const NOT_CLEAN = -1;

/**
 * Whether `sanitizeFrame(frame, options)` would give back exactly this frame (the same fields in
 * the same order, holding the same values): then the frame can go on as it is, with no copy and
 * no second pass. True only for plain data that is already clean (plain objects and arrays,
 * strings, finite numbers, booleans and null; no key to redact; nothing near the caps, see
 * `cleanBytes`); anything else is for `sanitizeFrame`. Allocates nothing. Values are read as
 * `JSON.stringify` reads them: a getter that answers differently on a second read is not caught
 * (plain data from another process, or the executor's own sanitised frames, have none).
 */
export function isSanitizedFrame(frame: ToolCallArtifactData, options?: FrameHygieneOptions): boolean {
  const maxBytes = resolveMaxBytes(options);
  const redaction = redactionPolicy(options?.redactKeys ?? DEFAULT_REDACT_KEYS);
  const value = frame as unknown as Record<string, unknown>;
  // The fields sanitizeFrame writes, in its order: toolCallId, name, parentToolCallId?, timestamp?, phase, then the phase's own.
  let step = 0;
  try {
    for (const key in value) {
      if (!Object.prototype.hasOwnProperty.call(value, key)) return false;
      const field = value[key];
      if (step === 0 && key === 'toolCallId') step = 1;
      else if (step === 1 && key === 'name') step = 2;
      else if (step === 2 && key === 'parentToolCallId') step = 3;
      else if (step <= 3 && key === 'timestamp' && field !== undefined) {
        step = 4;
        continue;
      } else if (step <= 4 && key === 'phase' && (field === 'started' || field === 'completed' || field === 'failed')) {
        step = 5;
        continue;
      } else if (step === 5 && key === PHASE_FIELDS[value.phase as ToolCallArtifactData['phase']]) {
        step = 6;
        if (key !== 'error') {
          const bytes = cleanBytes(field, 0, redaction);
          if (bytes === NOT_CLEAN || bytes > maxBytes) return false;
          continue;
        }
      } else return false;
      // A string field, capped: clean when it fits.
      if (typeof field !== 'string' || !jsonFits(field, maxBytes)) return false;
    }
  } catch {
    // A throwing getter or a hostile proxy: sanitizeFrame reports it.
    return false;
  }
  return step >= 5;
}

const PHASE_FIELDS: Record<ToolCallArtifactData['phase'], string> = { started: 'args', completed: 'result', failed: 'error' };

/**
 * isSanitizedFrame for a frame as the tool-call-v1 check gives it (`checkToolCallFrame`: a fresh
 * object of own data fields in wire order, parentToolCallId and timestamp only as strings, the
 * phase's field only where the payload had one): the same answer with its values read by name
 * instead of a walk over its keys, which the check has just made (the bus binding asks this of
 * every frame of every task: ~390 of its ~1,350 instructions per frame were that walk).
 */
export function isSanitizedCheckedFrame(frame: ToolCallArtifactData, options?: FrameHygieneOptions): boolean {
  const maxBytes = resolveMaxBytes(options);
  if (!jsonFits(frame.toolCallId, maxBytes) || !jsonFits(frame.name, maxBytes)) return false;
  const parent = frame.parentToolCallId;
  if (parent !== undefined && !jsonFits(parent, maxBytes)) return false;
  let field: unknown;
  switch (frame.phase) {
    case 'started':
      field = frame.args;
      // Present but undefined is not clean (sanitizeFrame drops it); absent is.
      if (field === undefined) return !Object.prototype.hasOwnProperty.call(frame, 'args');
      break;
    case 'completed':
      field = frame.result;
      if (field === undefined) return !Object.prototype.hasOwnProperty.call(frame, 'result');
      break;
    case 'failed':
      field = frame.error;
      if (field === undefined) return !Object.prototype.hasOwnProperty.call(frame, 'error');
      return typeof field === 'string' && jsonFits(field, maxBytes);
    default:
      return false;
  }
  try {
    const bytes = cleanBytes(field, 0, redactionPolicy(options?.redactKeys ?? DEFAULT_REDACT_KEYS));
    return bytes !== NOT_CLEAN && bytes <= maxBytes;
  } catch {
    // A throwing getter or a hostile proxy in the payload: sanitizeFrame reports it.
    return false;
  }
}

/**
 * The most bytes of JSON a clean value takes, plus MARKER_RESERVE per object and array in it (the
 * room FrameSanitizer keeps free for a truncation marker as it places each entry: a value whose
 * figure fits its budget is placed whole, every entry getting at least its own figure), or NOT_CLEAN when sanitizing would change it: a
 * value that is not plain data, a key to redact, more than MAX_DEPTH levels (a cycle ends there
 * too), or an object with more than one large value (those share what is left between them).
 */
function cleanBytes(value: unknown, depth: number, redaction: RedactionPolicy): number {
  switch (typeof value) {
    case 'string':
      return jsonBytes(value);
    case 'number':
      if (!Number.isFinite(value)) return NOT_CLEAN;
      return Number.isSafeInteger(value) ? integerDigits(value) : MAX_NUMBER_JSON;
    case 'boolean':
      return value ? 4 : 5;
    case 'object':
      break;
    default:
      return NOT_CLEAN;
  }
  if (value === null) return 4;
  if (depth >= MAX_DEPTH || (value as { toJSON?: unknown }).toJSON !== undefined) return NOT_CLEAN;
  let bytes = 2;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item === undefined) return NOT_CLEAN;
      const itemBytes = cleanBytes(item, depth + 1, redaction);
      if (itemBytes === NOT_CLEAN) return NOT_CLEAN;
      bytes += (i > 0 ? 1 : 0) + itemBytes;
    }
    return bytes + MARKER_RESERVE;
  }
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return NOT_CLEAN;
  let count = 0;
  let large = 0;
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) return NOT_CLEAN;
    const keyBytes = redaction.keyBytes(key);
    if (keyBytes === SECRET_KEY) return NOT_CLEAN;
    const field = (value as Record<string, unknown>)[key];
    if (field === undefined) return NOT_CLEAN;
    const isObject = typeof field === 'object' && field !== null;
    if (isObject || (typeof field === 'string' && field.length > SHORT_STRING)) large += 1;
    if (large > 1) return NOT_CLEAN;
    const fieldBytes = cleanBytes(field, depth + 1, redaction);
    if (fieldBytes === NOT_CLEAN) return NOT_CLEAN;
    bytes += (count > 0 ? 1 : 0) + keyBytes + 1 + fieldBytes;
    count += 1;
  }
  return bytes + MARKER_RESERVE;
}

/** The JSON length of a safe integer. */
function integerDigits(n: number): number {
  let digits = n < 0 ? 2 : 1;
  for (let rest = Math.abs(n); rest >= 10; rest = Math.floor(rest / 10)) digits += 1;
  return digits;
}
