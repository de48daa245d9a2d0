/** The Node HTTP server settings that bound how long a client may take to send a request. */
export interface HttpTimeoutOptions {
  /** Time to receive the request headers (Node's default: 60 s). */
  headersTimeoutMs?: number;
  /** Time to receive the whole request, headers and body (Node's default: 300 s). */
  requestTimeoutMs?: number;
  /** How long an idle keep-alive connection stays open between requests (Node's default: 5 s). */
  keepAliveTimeoutMs?: number;
}

export const HTTP_TIMEOUT_DEFAULTS: Required<HttpTimeoutOptions> = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
};

/** The part of `node:http`'s Server these settings live on. */
export interface HttpTimeoutTarget {
  headersTimeout: number;
  requestTimeout: number;
  keepAliveTimeout: number;
}

/**
 * Sets the server's header, request and keep-alive timeouts (defaults: 10 s, 30 s, 5 s). A2aModule
 * never changes the host's server by itself: the application calls this on its own server,
 * e.g. `applyHttpTimeouts(app.getHttpServer())` before `app.listen()`. The request timeout is a
 * backstop for every route; the A2A routes' bodies have their own budget (`bodyTimeoutMs`).
 * Node checks these every 30 s (`connectionsCheckingInterval`), so a timeout fires up to that late.
 */
export function applyHttpTimeouts(server: HttpTimeoutTarget, options: HttpTimeoutOptions = {}): Required<HttpTimeoutOptions> {
  const settings = { ...HTTP_TIMEOUT_DEFAULTS, ...options };
  for (const [name, value] of Object.entries(settings)) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`applyHttpTimeouts: ${name} must be a positive whole number of ms, got ${String(value)}`);
  }
  // Headers must be in before the whole request is (Node refuses the reverse at creation).
  if (settings.headersTimeoutMs > settings.requestTimeoutMs) throw new Error('applyHttpTimeouts: headersTimeoutMs must not exceed requestTimeoutMs');
  server.headersTimeout = settings.headersTimeoutMs;
  server.requestTimeout = settings.requestTimeoutMs;
  server.keepAliveTimeout = settings.keepAliveTimeoutMs;
  return settings;
}
