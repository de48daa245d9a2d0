/**
 * An OpenAI-compatible endpoint's failures in words a user can act on (which endpoint failed and
 * why), instead of the client's "Connection error." or "500 status code (no body)". No OpenAI
 * client here: the model's own module loads that (see openai-compatible.ts).
 */

export const OPENAI_DEFAULT_ENDPOINT = 'https://api.openai.com/v1';

/** What a socket-level error code means, for a person. */
const NETWORK_CAUSES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found (DNS lookup failed)',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection reset',
  UND_ERR_HEADERS_TIMEOUT: 'no answer in time',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed TLS certificate',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate not trusted',
};

/** The error and its causes, outermost first (bounded: a cause chain may loop). */
function causes(err: unknown): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  let current: unknown = err;
  while (typeof current === 'object' && current !== null && out.length < 8 && !out.includes(current as Record<string, unknown>)) {
    out.push(current as Record<string, unknown>);
    current = (current as { cause?: unknown }).cause;
  }
  return out;
}

/** The server's own words: the message without the client's status prefix and help links. */
function serverWords(message: string, status: number): string {
  return message
    .replace(/\s*Troubleshooting URL:.*$/s, '')
    .replace(new RegExp(`^${status}\\s+`), '')
    .replace(/^status code \(no body\)$/, 'no details given')
    .trim();
}

/** A model failure as a sentence naming the endpoint and the cause. */
export function describeModelError(err: unknown, endpoint: string, model: string): string {
  const chain = causes(err);
  const message = (chain[0]?.message as string | undefined) ?? String(err);
  const status = chain.map((e) => e.status).find((s): s is number => typeof s === 'number');
  if (status !== undefined) {
    const words = serverWords(message, status) || 'no details given';
    if (status === 401 || status === 403) return `the model at ${endpoint} refused the credentials (${status}): ${words}`;
    if (status === 404) return `the model at ${endpoint} answered 404 (is the model "${model}" served there, and is the path right?): ${words}`;
    if (status === 429) return `the model at ${endpoint} is rate-limiting requests (429): ${words}`;
    if (status >= 500) return `the model at ${endpoint} failed (${status}): ${words}`;
    return `the model at ${endpoint} rejected the request (${status}): ${words}`;
  }
  const code = chain.map((e) => e.code).find((c): c is string => typeof c === 'string' && c in NETWORK_CAUSES);
  if (code) return `could not reach the model at ${endpoint}: ${NETWORK_CAUSES[code]}`;
  const names = chain.map((e) => e.name);
  if (names.includes('APIConnectionTimeoutError')) return `could not reach the model at ${endpoint}: no answer in time`;
  if (names.includes('APIConnectionError')) {
    const deepest = (chain[chain.length - 1]?.message as string | undefined) ?? message;
    return `could not reach the model at ${endpoint}: ${deepest}`;
  }
  return `the model at ${endpoint} failed: ${message}`;
}

