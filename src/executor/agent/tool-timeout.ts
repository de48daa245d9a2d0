import { StructuredTool, type StructuredToolInterface } from '@langchain/core/tools';

export class ToolTimeoutError extends Error {
  override readonly name = 'ToolTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`timed out after ${timeoutMs} ms`);
  }
}

type ToolBody = (arg: unknown, runManager: unknown, config?: { signal?: AbortSignal }) => unknown;

/**
 * The same tool, bounded in time: when its body has not settled after `timeoutMs`, the
 * call fails with "timed out after N ms" and the tool's signal is aborted. The bound sits on
 * the tool's body (`_call`), inside LangChain's own tool run, so the timeout is reported as
 * that tool's error on the `tools` stream the moment it fires, and the agent carries on.
 * Tools that are not StructuredTool instances are returned unchanged.
 */
export function withToolTimeout<T extends StructuredToolInterface>(tool: T, timeoutMs: number): T {
  if (!(tool instanceof StructuredTool)) return tool;
  // `_call` is the protected extension point every StructuredTool implements.
  const body = (tool as unknown as { _call: ToolBody })._call;
  const bounded = Object.create(tool) as T & { _call: ToolBody };
  bounded._call = function (this: unknown, arg, runManager, config) {
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
        .then(() => body.call(this, arg, runManager, { ...config, signal }))
        .then(resolve, reject)
        .finally(() => clearTimeout(timer));
    });
  };
  return bounded;
}
