/** A raw SSE client for the tests that need what SDK clients hide: event ids, comments, reconnects. */

export interface SseMessage {
  id?: string;
  data?: string;
  comment?: string;
  event?: string;
}

/** Parses an SSE body as it arrives (fields per the HTML spec; one message per blank line). */
export async function* readSse(response: Response): AsyncGenerator<SseMessage> {
  if (!response.body) throw new Error('the response has no body');
  const decoder = new TextDecoder();
  let buffer = '';
  let message: SseMessage = {};
  let filled = false;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, '');
      buffer = buffer.slice(newline + 1);
      if (line === '') {
        if (filled) yield message;
        message = {};
        filled = false;
        continue;
      }
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      filled = true;
      if (field === '') message.comment = value;
      else if (field === 'data') message.data = message.data === undefined ? value : `${message.data}\n${value}`;
      else if (field === 'id') message.id = value;
      else if (field === 'event') message.event = value;
    }
  }
}

/** The JSON of each data message (the JSON-RPC envelope, or the bare StreamResponse). */
export function dataOf(message: SseMessage): Record<string, unknown> {
  return JSON.parse(message.data ?? 'null') as Record<string, unknown>;
}

export interface RpcOptions {
  version?: string | null;
  headers?: Record<string, string>;
  id?: string | number | null;
  signal?: AbortSignal;
}

/** POST one JSON-RPC call to /a2a; `version: null` sends no A2A-Version header. */
export function rpc(base: string, method: string, params: unknown, options: RpcOptions = {}): Promise<Response> {
  const { version = '1.0', headers = {}, id = 1, signal } = options;
  return fetch(`${base}/a2a`, {
    method: 'POST',
    signal,
    headers: { 'content-type': 'application/json', ...(version === null ? {} : { 'a2a-version': version }), ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
  });
}

/** Collects every message of a stream until it ends. */
export async function collect(response: Response): Promise<SseMessage[]> {
  const out: SseMessage[] = [];
  for await (const message of readSse(response)) out.push(message);
  return out;
}

/** A 1.0 user message in wire JSON. */
export function wireMessage(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { messageId: `m-${Math.random().toString(36).slice(2)}`, role: 'ROLE_USER', parts: [{ text }], ...extra };
}

/** What a wait was for; a function is asked when the wait fails, so it can say what it saw. */
export type WaitedFor = string | (() => string);

const described = (what: WaitedFor): string => (typeof what === 'string' ? what : what());

/** Waits until `check` holds (polling), or fails saying what it waited for. */
export async function eventually(check: () => boolean, timeoutMs = 5_000, what: WaitedFor = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${described(what)}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * `promise`, or a failure after `timeoutMs` saying what it waited for: a step that never comes
 * (a stream that never ends, a reply that never arrives) then names itself instead of running
 * into Jest's timeout, which names nothing. The promise itself is left as it is.
 */
export async function within<T>(promise: Promise<T>, timeoutMs: number, what: WaitedFor): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${described(what)}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A stream request, made again after a pause while it is answered 503, as a client would: in Redis
 * mode a subscription on the writing instance waits until Redis holds the events it starts from,
 * and answers 503 past a bound (Redis slow to take a large backlog on a loaded machine). Any
 * answer other than an event stream, or a fifth 503, fails naming `what`, the status and the body.
 */
export async function streamRetryingOn503(request: () => Promise<Response>, what: string): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const response = await request();
    if (response.status === 200 && response.headers.get('content-type')?.startsWith('text/event-stream')) return response;
    const body = await response.text();
    if (response.status !== 503 || attempt === 5) throw new Error(`${what} was answered ${response.status}: ${body.slice(0, 300)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
