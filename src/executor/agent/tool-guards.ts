/**
 * Guards around a tool's body (`_call`, the protected extension point every StructuredTool
 * implements). They sit inside LangChain's own tool run, so what they do is reported as that
 * tool's result or error on the `tools` stream, as it happens. Each returns a new tool object
 * (prototype-linked to the original, which is left unchanged); tools that are not
 * StructuredTool instances are returned as they are.
 */
import { StructuredTool, type StructuredToolInterface } from '@langchain/core/tools';
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

/** JSON.stringify cannot take it (a cycle, a BigInt): made JSON-safe, uncapped and unredacted. */
function jsonSafe(value: unknown): unknown {
  if (typeof value !== 'object' && typeof value !== 'bigint') return value;
  try {
    JSON.stringify(value);
    return value;
  } catch {
    return sanitizeForFrame(value, { redactKeys: [], maxFieldBytes: Number.MAX_SAFE_INTEGER });
  }
}

/**
 * The same tool, with a return value that JSON cannot take (a cycle, a BigInt) turned into
 * plain data before LangChain stores it, where it would otherwise become "[object Object]"
 * for the model and for the frame alike. Values JSON takes are left exactly as they are;
 * tools answering "content_and_artifact" keep their artifact untouched.
 */
export function withJsonSafeResult<T extends StructuredToolInterface>(tool: T): T {
  if (tool instanceof StructuredTool && tool.responseFormat === 'content_and_artifact') return tool;
  return wrapBody(tool, (body) => async (arg, runManager, config) => jsonSafe(await body(arg, runManager, config)));
}
