/**
 * Guards around a tool's body (`_call`, the protected extension point every StructuredTool
 * implements). They sit inside LangChain's own tool run, so what they do is reported as that
 * tool's result or error on the `tools` stream, as it happens. Each returns a new tool object
 * (prototype-linked to the original, which is left unchanged); tools that are not
 * StructuredTool instances are returned as they are.
 */
import { StructuredTool, ToolInputParsingException, type StructuredToolInterface } from '@langchain/core/tools';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { sanitizeForFrame } from '../frames/sanitize-for-frame';

export class ToolTimeoutError extends Error {
  override readonly name = 'ToolTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`timed out after ${timeoutMs} ms`);
  }
}

interface BodyConfig {
  signal?: AbortSignal;
}
type ToolBody = (arg: unknown, runManager: unknown, config?: BodyConfig) => unknown;

function wrapBody<T extends StructuredToolInterface>(tool: T, wrap: (body: ToolBody) => ToolBody): T {
  if (!(tool instanceof StructuredTool)) return tool;
  const guarded = Object.create(tool) as T & { _call: ToolBody };
  const original = (tool as unknown as { _call: ToolBody })._call;
  guarded._call = wrap((arg, runManager, config) => original.call(guarded, arg, runManager, config));
  return guarded;
}

/**
 * The same tool, bounded in time: when its body has not settled after `timeoutMs`, the call
 * fails with "timed out after N ms" and the tool's signal is aborted, and the agent carries on.
 */
export function withToolTimeout<T extends StructuredToolInterface>(tool: T, timeoutMs: number): T {
  return wrapBody(tool, (body) => (arg, runManager, config) => {
    const timeout = new AbortController();
    const signal = config?.signal ? AbortSignal.any([config.signal, timeout.signal]) : timeout.signal;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const error = new ToolTimeoutError(timeoutMs);
        timeout.abort(error);
        reject(error);
      }, timeoutMs);
      // Through a promise, so a body that throws synchronously is a rejection too.
      Promise.resolve()
        .then(() => body(arg, runManager, { ...config, signal }))
        .then(resolve, reject)
        .finally(() => clearTimeout(timer));
    });
  });
}

/** Values JSON.stringify turns into `{}`, silently dropping what they hold. */
const emptiedByJson = (value: unknown): boolean => value instanceof Map || value instanceof Set || value instanceof Error;

/**
 * JSON.stringify cannot take it (a cycle, a BigInt) or would empty part of it (a Map, a Set, an
 * Error): made JSON-safe, uncapped and unredacted. Anything else is returned as it is.
 */
function jsonSafe(value: unknown): unknown {
  if (typeof value !== 'object' && typeof value !== 'bigint') return value;
  try {
    let lossy = false;
    JSON.stringify(value, (_key, item: unknown) => {
      lossy ||= emptiedByJson(item);
      return item;
    });
    if (!lossy) return value;
  } catch {
    // a cycle or a BigInt: converted below
  }
  return sanitizeForFrame(value, { redactKeys: [], maxFieldBytes: Number.MAX_SAFE_INTEGER });
}

/**
 * The same tool, with a return value that JSON cannot take (a cycle, a BigInt) or would empty
 * (a Map, a Set, an Error) turned into plain data before LangChain stores it, where it would
 * otherwise become "[object Object]" or `{}` for the model and for the frame alike. Values JSON
 * takes faithfully are left exactly as they are;
 * tools answering "content_and_artifact" keep their artifact untouched.
 */
export function withJsonSafeResult<T extends StructuredToolInterface>(tool: T): T {
  if (tool instanceof StructuredTool && tool.responseFormat === 'content_and_artifact') return tool;
  return wrapBody(tool, (body) => async (arg, runManager, config) => jsonSafe(await body(arg, runManager, config)));
}

type ToolCallMethod = (arg: unknown, config?: unknown, tags?: unknown) => Promise<unknown>;

/** The argument names a tool's schema allows, when it allows no others. */
function closedArgumentNames(tool: StructuredToolInterface): Set<string> | undefined {
  // A zod object that keeps unknown keys (passthrough, looseObject, catchall) takes any argument,
  // though LangChain's JSON Schema for it says additionalProperties: false.
  const catchall = (tool.schema as { _zod?: { def?: { catchall?: { _zod?: { def?: { type?: string } } } } } })._zod?.def?.catchall;
  if (catchall && catchall._zod?.def?.type !== 'never') return undefined;
  const parameters = convertToOpenAITool(tool).function.parameters as { properties?: object; additionalProperties?: unknown } | undefined;
  if (!parameters || parameters.additionalProperties !== false) return undefined;
  return new Set(Object.keys(parameters.properties ?? {}));
}

/**
 * The same tool, refusing arguments its schema does not declare: LangChain strips them
 * silently, so a misspelt optional argument would be ignored. The call fails instead, naming
 * the argument and the ones the tool takes.
 */
export function withKnownArguments<T extends StructuredToolInterface>(tool: T): T {
  if (!(tool instanceof StructuredTool)) return tool;
  const known = closedArgumentNames(tool);
  if (!known) return tool;
  const guarded = Object.create(tool) as T;
  const original = (tool as unknown as { call: ToolCallMethod }).call;
  const call: ToolCallMethod = (arg, config, tags) => {
    const input = typeof arg === 'object' && arg !== null && 'args' in arg && (arg as { type?: unknown }).type === 'tool_call' ? (arg as { args: unknown }).args : arg;
    if (typeof input === 'object' && input !== null && !Array.isArray(input)) {
      const unknown = Object.keys(input).filter((key) => !known.has(key));
      if (unknown.length > 0) {
        const takes = known.size > 0 ? `takes ${[...known].join(', ')}` : 'takes no arguments';
        const message = `Received tool input did not match expected schema: unknown argument ${unknown.map((k) => JSON.stringify(k)).join(', ')} (${tool.name} ${takes})`;
        return Promise.reject(new ToolInputParsingException(message, JSON.stringify(input)));
      }
    }
    return original.call(guarded, arg, config, tags);
  };
  (guarded as unknown as { call: ToolCallMethod }).call = call;
  return guarded;
}
