/** Why a client call failed, in terms a caller can act on. */
export class A2aClientError extends Error {
  override readonly name = 'A2aClientError';

  constructor(
    message: string,
    readonly details: {
      /** JSON-RPC error code (A2A: -32001 task not found, -32004 unsupported operation, …). */
      code?: number;
      /** HTTP status, when the server answered with one other than 200. */
      status?: number;
      /** `error.data` (JSON-RPC) or `error.details` (HTTP+JSON) as the server sent it. */
      data?: unknown;
      /** A transient failure (network drop, 5xx, 429, idle stream): worth retrying. */
      retryable?: boolean;
    } = {},
  ) {
    super(message);
  }

  get retryable(): boolean {
    return this.details.retryable === true;
  }
}

/** The message of anything thrown, for error text shown to users. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) {
    // undici wraps the real network error ("ECONNREFUSED", "other side closed") in `cause`.
    const cause = (err as { cause?: unknown }).cause;
    return cause instanceof Error && cause.message && cause.message !== err.message
      ? `${err.message}: ${cause.message}`
      : err.message;
  }
  return String(err);
}
