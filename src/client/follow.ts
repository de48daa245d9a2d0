/**
 * Follows one A2A task stream over fetch (POST + SSE) and yields its events, in order, for
 * `reduceTimeline`. It resumes by itself: after a drop (network error, idle connection, 5xx,
 * a stream that ends before the task settles) it waits with exponential backoff and
 * resubscribes (`SubscribeToTask`, 0.3 `tasks/resubscribe`, HTTP+JSON `POST /tasks/{id}:subscribe`)
 * with `Last-Event-ID` set to the last SSE id it received, so the server sends only what was
 * missed. If the task settled while the client was away, it reads it once with `GetTask`.
 * Works the same in Node (≥ 18) and in browsers; an AbortSignal stops it at any point.
 */
import { TOOL_CALL_V1_EXTENSION_URI } from '../extensions/tool-call-v1';
import type { A2aEndpoint } from './agent-card';
import { A2aClientError, errorMessage } from './errors';
import { readSse } from './sse';
import { isSettledPhase, readStreamEvent, type StreamEvent } from './stream-event';
import type { TimelineInput } from './timeline.reducer';

export interface RetryOptions {
  /** Reconnects in a row, with no new event in between, before giving up (default 8). */
  maxAttempts?: number;
  /** First backoff delay (default 250 ms); it doubles per failure up to `maxDelayMs`. */
  initialDelayMs?: number;
  /** Backoff ceiling (default 5 s). */
  maxDelayMs?: number;
}

export interface ReconnectInfo {
  attempt: number;
  delayMs: number;
  reason: string;
  /** The `Last-Event-ID` the resume will send. */
  lastEventId?: string;
}

export interface FollowCommonOptions {
  endpoint: A2aEndpoint;
  signal?: AbortSignal;
  /** Extra request headers (authentication, …). */
  headers?: Record<string, string>;
  /** Ask for tool-call-v1 frames (default true): sends the extension header. */
  toolCallV1?: boolean;
  fetch?: typeof fetch;
  retry?: RetryOptions;
  /** A connection that sends nothing, keep-alive comments included, for this long is dropped and resumed (default 60 s). */
  idleTimeoutMs?: number;
  onReconnect?: (info: ReconnectInfo) => void;
  /** The clock stamped on events as `receivedAt` (default Date.now). */
  now?: () => number;
}

export interface FollowMessageOptions extends FollowCommonOptions {
  text: string;
  /** Reused on a retry before the task id is known, so a server may de-duplicate. */
  messageId?: string;
  contextId?: string;
  /** Continue an existing (input-required) task. */
  taskId?: string;
}

export interface FollowTaskOptions extends FollowCommonOptions {
  taskId: string;
  /** Resume after this SSE id; without it the server decides what it replays. */
  lastEventId?: string;
}

interface HttpCall {
  /** The A2A operation, for error messages. */
  operation: string;
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

const DEFAULT_RETRY: Required<RetryOptions> = { maxAttempts: 8, initialDelayMs: 250, maxDelayMs: 5000 };
const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

/** A random id; `crypto.randomUUID` is missing on plain-http pages other than localhost. */
export function newMessageId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

let rpcIds = 0;

function protocolHeaders(options: FollowCommonOptions, accept: string): Record<string, string> {
  const v10 = options.endpoint.protocolVersion === '1.0';
  const headers: Record<string, string> = {
    Accept: accept,
    // A request without A2A-Version is 0.3, per spec.
    ...(v10 ? { 'A2A-Version': '1.0' } : {}),
  };
  if (options.toolCallV1 !== false) headers[v10 ? 'A2A-Extensions' : 'X-A2A-Extensions'] = TOOL_CALL_V1_EXTENSION_URI;
  return { ...headers, ...options.headers };
}

function jsonRpcCall(options: FollowCommonOptions, method: string, params: unknown, accept: string): HttpCall {
  return {
    operation: method,
    url: options.endpoint.url,
    method: 'POST',
    headers: { ...protocolHeaders(options, accept), 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcIds, method, params }),
  };
}

function restUrl(endpoint: A2aEndpoint, path: string): string {
  return endpoint.url.replace(/\/+$/, '') + path;
}

function sendCall(options: FollowMessageOptions, messageId: string): HttpCall {
  const v10 = options.endpoint.protocolVersion === '1.0';
  const message: Record<string, unknown> = v10
    ? { messageId, role: 'ROLE_USER', parts: [{ text: options.text }] }
    : { kind: 'message', messageId, role: 'user', parts: [{ kind: 'text', text: options.text }] };
  if (options.contextId) message.contextId = options.contextId;
  if (options.taskId) message.taskId = options.taskId;
  if (options.endpoint.binding === 'HTTP+JSON') {
    return {
      operation: 'SendStreamingMessage',
      url: restUrl(options.endpoint, '/message:stream'),
      method: 'POST',
      headers: { ...protocolHeaders(options, 'text/event-stream'), 'Content-Type': 'application/json' },
      body: JSON.stringify({ message }),
    };
  }
  return jsonRpcCall(options, v10 ? 'SendStreamingMessage' : 'message/stream', { message }, 'text/event-stream');
}

function subscribeCall(options: FollowCommonOptions, taskId: string): HttpCall {
  if (options.endpoint.binding === 'HTTP+JSON') {
    return {
      operation: 'SubscribeToTask',
      url: restUrl(options.endpoint, `/tasks/${encodeURIComponent(taskId)}:subscribe`),
      method: 'POST',
      headers: protocolHeaders(options, 'text/event-stream'),
    };
  }
  const method = options.endpoint.protocolVersion === '1.0' ? 'SubscribeToTask' : 'tasks/resubscribe';
  return jsonRpcCall(options, method, { id: taskId }, 'text/event-stream');
}

function getTaskCall(options: FollowCommonOptions, taskId: string): HttpCall {
  if (options.endpoint.binding === 'HTTP+JSON') {
    return {
      operation: 'GetTask',
      url: restUrl(options.endpoint, `/tasks/${encodeURIComponent(taskId)}`),
      method: 'GET',
      headers: protocolHeaders(options, 'application/json'),
    };
  }
  const method = options.endpoint.protocolVersion === '1.0' ? 'GetTask' : 'tasks/get';
  return jsonRpcCall(options, method, { id: taskId }, 'application/json');
}

function cancelCall(options: FollowCommonOptions, taskId: string): HttpCall {
  if (options.endpoint.binding === 'HTTP+JSON') {
    return {
      operation: 'CancelTask',
      url: restUrl(options.endpoint, `/tasks/${encodeURIComponent(taskId)}:cancel`),
      method: 'POST',
      headers: { ...protocolHeaders(options, 'application/json'), 'Content-Type': 'application/json' },
      body: '{}',
    };
  }
  const method = options.endpoint.protocolVersion === '1.0' ? 'CancelTask' : 'tasks/cancel';
  return jsonRpcCall(options, method, { id: taskId }, 'application/json');
}

type Rec = Record<string, unknown>;
const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSON-RPC error object or a google.rpc.Status (HTTP+JSON) as an A2aClientError. */
function serverError(call: HttpCall, error: Rec, status?: number): A2aClientError {
  const code = typeof error.code === 'number' ? error.code : undefined;
  const message = typeof error.message === 'string' && error.message ? error.message : 'no message';
  const retryable = status !== undefined && (status >= 500 || status === 429 || status === 408);
  return new A2aClientError(`${call.operation} failed: ${message}${code !== undefined ? ` (code ${code})` : ''}`, {
    code: status === undefined ? code : undefined,
    status,
    data: error.data ?? error.details,
    retryable,
  });
}

function parseJson(call: HttpCall, text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const shown = text.length > 80 ? `${text.slice(0, 80)}…` : text;
    throw new A2aClientError(`${call.operation}: the server sent ${what} that is not JSON: ${JSON.stringify(shown)}`);
  }
}

/** The `result` of a JSON-RPC response, or the bare HTTP+JSON body; server errors thrown. */
function unwrap(call: HttpCall, body: unknown, binding: A2aEndpoint['binding']): unknown {
  if (!isRecord(body)) throw new A2aClientError(`${call.operation}: the server sent a non-object JSON value`);
  if (isRecord(body.error)) throw serverError(call, body.error);
  if (binding === 'HTTP+JSON') return body;
  if (!('result' in body)) throw new A2aClientError(`${call.operation}: JSON-RPC response has neither result nor error`);
  return body.result;
}

async function httpFailure(call: HttpCall, response: Response): Promise<A2aClientError> {
  const text = await response.text().catch(() => '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (isRecord(body) && isRecord(body.error)) return serverError(call, body.error, response.status);
  const retryable = response.status >= 500 || response.status === 429 || response.status === 408;
  return new A2aClientError(`${call.operation} failed: HTTP ${response.status} from ${call.url}`, {
    status: response.status,
    retryable,
  });
}

async function request(
  doFetch: typeof fetch,
  call: HttpCall,
  signal: AbortSignal | undefined,
  extra?: Record<string, string>,
): Promise<Response> {
  try {
    return await doFetch(call.url, {
      method: call.method,
      headers: { ...call.headers, ...extra },
      body: call.body,
      signal,
    });
  } catch (err) {
    throw new A2aClientError(`${call.operation}: could not reach ${call.url}: ${errorMessage(err)}`, { retryable: true });
  }
}

interface WireEvent {
  data: unknown;
  id?: string;
  retry?: number;
}

async function* openStream(
  doFetch: typeof fetch,
  call: HttpCall,
  binding: A2aEndpoint['binding'],
  lastEventId: string | undefined,
  signal: AbortSignal,
  onChunk: () => void,
): AsyncGenerator<WireEvent> {
  const response = await request(doFetch, call, signal, lastEventId ? { 'Last-Event-ID': lastEventId } : undefined);
  if (!response.ok) throw await httpFailure(call, response);
  const type = response.headers.get('content-type') ?? '';
  if (!type.includes('text/event-stream')) {
    // A JSON-RPC server answers a bad streaming request with a plain JSON error.
    unwrap(call, parseJson(call, await response.text(), 'a response'), binding);
    throw new A2aClientError(`${call.operation}: expected text/event-stream, got ${type || 'no content type'}`);
  }
  if (!response.body) throw new A2aClientError(`${call.operation}: the response has no body`, { retryable: true });
  try {
    for await (const message of readSse(response.body, onChunk)) {
      const data = unwrap(call, parseJson(call, message.data, 'an event'), binding);
      yield { data, id: message.id, retry: message.retry };
    }
  } catch (err) {
    if (err instanceof A2aClientError) throw err;
    throw new A2aClientError(`${call.operation}: the stream broke: ${errorMessage(err)}`, { retryable: true });
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function settles(event: StreamEvent): boolean {
  if (event.kind === 'message') return true;
  const status = event.kind === 'task' || event.kind === 'status' ? event.status : undefined;
  return isSettledPhase(status?.state);
}

/** The task read once with GetTask, as a stream event, if it has settled; else undefined. */
async function settledSnapshot(
  doFetch: typeof fetch,
  options: FollowCommonOptions,
  taskId: string,
): Promise<unknown | undefined> {
  const call = getTaskCall(options, taskId);
  try {
    const response = await request(doFetch, call, options.signal);
    if (!response.ok) return undefined;
    const task = unwrap(call, await response.json(), options.endpoint.binding);
    // 1.0 returns a bare Task: wrap it as the StreamResponse it would be on a stream.
    const data = isRecord(task) && task.kind === 'task' ? task : { task };
    const reading = readStreamEvent(data);
    return reading.ok && settles(reading.event) ? data : undefined;
  } catch {
    return undefined;
  }
}

export interface CancelTaskOptions extends Omit<FollowCommonOptions, 'retry' | 'idleTimeoutMs' | 'onReconnect' | 'now'> {
  taskId: string;
}

/**
 * Asks the server to cancel a task (`CancelTask`, 0.3 `tasks/cancel`, HTTP+JSON
 * `POST /tasks/{id}:cancel`). Resolves with the task as the server returned it; a refusal
 * (e.g. the task already ended) rejects with the server's error.
 */
export async function cancelTask(options: CancelTaskOptions): Promise<unknown> {
  const doFetch: typeof fetch = options.fetch ?? ((input, init) => fetch(input, init));
  const call = cancelCall(options, options.taskId);
  const response = await request(doFetch, call, options.signal);
  if (!response.ok) throw await httpFailure(call, response);
  return unwrap(call, parseJson(call, await response.text(), 'a response'), options.endpoint.binding);
}

interface Start {
  send?: FollowMessageOptions;
  taskId?: string;
  lastEventId?: string;
}

async function* follow(start: Start, options: FollowCommonOptions): AsyncGenerator<TimelineInput> {
  // Browsers throw "Illegal invocation" on an unbound window.fetch.
  const doFetch: typeof fetch = options.fetch ?? ((input, init) => fetch(input, init));
  const now = options.now ?? Date.now;
  const retry = { ...DEFAULT_RETRY, ...options.retry };
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const messageId = start.send?.messageId ?? newMessageId();
  let taskId = start.taskId;
  let lastEventId = start.lastEventId;
  let serverRetryMs: number | undefined;
  let settled = false;
  let failures = 0;
  // Once the server has answered the message with an event, a retry resubscribes instead of resending.
  let accepted = start.send === undefined;

  while (true) {
    const resuming = accepted;
    let call: HttpCall;
    if (!resuming && start.send) call = sendCall(start.send, messageId);
    else if (taskId) call = subscribeCall(options, taskId);
    else throw new A2aClientError('the stream dropped before the server named the task: cannot resume it');
    const attempt = new AbortController();
    const abortAttempt = (): void => attempt.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', abortAttempt, { once: true });
    if (options.signal?.aborted) abortAttempt();
    let idle: ReturnType<typeof setTimeout> | undefined;
    const watch = (): void => {
      clearTimeout(idle);
      idle = setTimeout(
        () => attempt.abort(new A2aClientError(`no data for ${idleTimeoutMs} ms`, { retryable: true })),
        idleTimeoutMs,
      );
    };
    let reason: string;
    try {
      watch();
      for await (const event of openStream(doFetch, call, options.endpoint.binding, lastEventId, attempt.signal, watch)) {
        const reading = readStreamEvent(event.data);
        const isSnapshot = reading.ok && reading.event.kind === 'task';
        // Progress is a new SSE id (or, from a server without ids, anything but a snapshot).
        if (event.id !== undefined ? event.id !== lastEventId : !isSnapshot) failures = 0;
        if (event.id !== undefined) lastEventId = event.id;
        if (event.retry !== undefined) serverRetryMs = event.retry;
        accepted = true;
        if (reading.ok) {
          taskId ??= reading.event.taskId;
          if (settles(reading.event)) settled = true;
        }
        const input: TimelineInput = { data: event.data, receivedAt: now() };
        if (event.id !== undefined) input.eventId = event.id;
        yield input;
      }
      if (settled) return;
      reason = 'the stream ended before the task finished';
    } catch (err) {
      if (options.signal?.aborted) throw options.signal.reason ?? err;
      if (settled) return;
      const failure = err instanceof A2aClientError ? err : new A2aClientError(errorMessage(err));
      if (!failure.retryable) {
        // Resubscribing to a task that settled meanwhile is refused (-32004): read it instead.
        const snapshot = resuming && taskId ? await settledSnapshot(doFetch, options, taskId) : undefined;
        if (snapshot === undefined) throw failure;
        yield { data: snapshot, receivedAt: now() };
        return;
      }
      reason = failure.message;
    } finally {
      clearTimeout(idle);
      options.signal?.removeEventListener('abort', abortAttempt);
    }
    failures++;
    if (failures > retry.maxAttempts) {
      throw new A2aClientError(`gave up after ${retry.maxAttempts} reconnects: ${reason}`);
    }
    const base = Math.min(retry.maxDelayMs, (serverRetryMs ?? retry.initialDelayMs) * 2 ** (failures - 1));
    // Jitter spreads the reconnects of many clients after a server restart.
    const delayMs = Math.round(base * (0.5 + Math.random() / 2));
    options.onReconnect?.({ attempt: failures, delayMs, reason, lastEventId });
    await sleep(delayMs, options.signal);
  }
}

/**
 * Sends a message with `SendStreamingMessage` (0.3 `message/stream`) and yields every event
 * of the task until it completes, fails, is canceled or needs input; resumes after drops.
 */
export function followMessage(options: FollowMessageOptions): AsyncGenerator<TimelineInput> {
  return follow({ send: options }, options);
}

/** Follows an existing task (`SubscribeToTask`), resuming after `lastEventId` if given. */
export function followTask(options: FollowTaskOptions): AsyncGenerator<TimelineInput> {
  return follow({ taskId: options.taskId, lastEventId: options.lastEventId }, options);
}
