import { HttpException } from '@nestjs/common';
import {
  A2AError,
  ContentTypeNotSupportedError,
  ERROR_INFO_TYPE,
  ExtensionSupportRequiredError,
  PushNotificationNotSupportedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
  VersionNotSupportedError,
  restStatusFor,
  toJsonRpcError,
  toRestErrorBody,
  type ErrorDetail,
  type RestErrorBody,
} from '@a2a-js/sdk/errors';
import { PROTOCOL_VERSIONS } from './a2a.constants';

/** One invalid field, as `google.rpc.BadRequest.FieldViolation`. */
export interface FieldViolation {
  field: string;
  description: string;
}

const BAD_REQUEST_TYPE = 'type.googleapis.com/google.rpc.BadRequest';

/** Longest echo of a client's value in an error: enough to recognise it, never a copy of a huge input. */
export const MAX_ECHO_LENGTH = 64;

/** A client's value as an error may echo it: at most MAX_ECHO_LENGTH characters, a cut marked with "…". */
export function echo(value: string): string {
  if (value.length <= MAX_ECHO_LENGTH) return value;
  // Never half of a surrogate pair.
  const kept = value.slice(0, MAX_ECHO_LENGTH - 1).replace(/[\uD800-\uDBFF]$/, '');
  return `${kept}…`;
}

/** JSON-RPC's own request errors (-32700, -32600, -32601, -32602), which A2A gives no error type. */
export class JsonRpcRequestError extends Error {
  constructor(
    readonly code: -32700 | -32600 | -32601 | -32602,
    message: string,
    readonly fieldViolations: FieldViolation[] = [],
  ) {
    super(message);
    this.name = 'JsonRpcRequestError';
  }
}

/**
 * A refusal that is about the HTTP exchange rather than the A2A operation: missing credentials
 * (401), a body too large (413), too deeply nested (400) or of an unreadable encoding (415), a
 * server shutting down (503).
 * Both bindings answer it with that HTTP status (and headers such as WWW-Authenticate or
 * Retry-After); JSON-RPC puts `jsonRpcCode` in the error object.
 */
export class A2aHttpError extends Error {
  constructor(
    readonly httpStatus: number,
    /** The `google.rpc.Code` name of the HTTP+JSON body (`UNAUTHENTICATED`, `UNAVAILABLE`…). */
    readonly rpcStatus: string,
    readonly jsonRpcCode: number,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'A2aHttpError';
  }
}

/**
 * JSON-RPC code of a failed authentication or authorization. A2A 1.0 leaves both to the
 * implementation ("JSON-RPC custom error"); -32000 is the first implementation-defined server
 * error, outside the range A2A keeps for its own errors (-32001 to -32099).
 */
export const AUTH_JSON_RPC_CODE = -32000;

export const authenticationRequired = (message: string, challenges: string[]): A2aHttpError =>
  new A2aHttpError(
    401,
    'UNAUTHENTICATED',
    AUTH_JSON_RPC_CODE,
    message,
    [{ '@type': ERROR_INFO_TYPE, reason: 'UNAUTHENTICATED', domain: 'toolstream', metadata: {} }],
    { 'WWW-Authenticate': challenges.join(', ') },
  );

/** A2A 1.0 (section 3.3.2) names 503 and JSON-RPC -32603 for temporary unavailability. */
export const serviceUnavailable = (message: string, retryAfterSeconds: number): A2aHttpError =>
  new A2aHttpError(503, 'UNAVAILABLE', -32603, message, [], { 'Retry-After': String(retryAfterSeconds) });

/** Too many tasks running: 503 for the server as a whole, 429 for one caller; both say when to retry. */
export const tooManyLiveTasks = (scope: 'server' | 'caller', limit: number, option: string, retryAfterSeconds: number): A2aHttpError =>
  new A2aHttpError(
    scope === 'server' ? 503 : 429,
    scope === 'server' ? 'UNAVAILABLE' : 'RESOURCE_EXHAUSTED',
    -32603,
    scope === 'server'
      ? `The server is running ${limit} tasks, its limit (${option}); retry after ${retryAfterSeconds} s`
      : `You have ${limit} tasks running, the limit per caller (${option}); wait for one to end or cancel one, then retry`,
    [{ '@type': ERROR_INFO_TYPE, reason: 'TOO_MANY_LIVE_TASKS', domain: 'toolstream', metadata: { limit: String(limit), option } }],
    { 'Retry-After': String(retryAfterSeconds) },
  );

export const bodyTooLarge = (limit: number, option: string): A2aHttpError =>
  new A2aHttpError(413, 'INVALID_ARGUMENT', -32600, `The request body exceeds the limit of ${limit} bytes (${option})`, [
    { '@type': BAD_REQUEST_TYPE, fieldViolations: [{ field: 'body', description: `larger than ${limit} bytes` }] },
  ]);

export const bodyTooDeep = (max: number): A2aHttpError =>
  new A2aHttpError(400, 'INVALID_ARGUMENT', -32600, `The request body nests arrays and objects deeper than ${max} levels (maxJsonDepth)`, [
    { '@type': BAD_REQUEST_TYPE, fieldViolations: [{ field: 'body', description: `nested deeper than ${max} levels` }] },
  ]);

/** A body still arriving when its time is up (a client that trickles it, or stalls). */
export const bodyTimedOut = (timeoutMs: number): A2aHttpError =>
  new A2aHttpError(408, 'DEADLINE_EXCEEDED', -32600, `The request body did not arrive within ${timeoutMs} ms (bodyTimeoutMs)`);

export const bodyUnreadable = (httpStatus: 400 | 415, detail: string): A2aHttpError =>
  new A2aHttpError(httpStatus, 'INVALID_ARGUMENT', -32600, `The request body could not be read: ${echo(detail)}`);

/** google.rpc.Code names of the HTTP statuses, as google.rpc maps them (code.proto). */
const RPC_STATUS_OF_HTTP: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  // Not in code.proto's table: as toolstream's own 408 (bodyTimeoutMs) names it, so a host's
  // TimeoutInterceptor's RequestTimeoutException reads as the deadline it is.
  408: 'DEADLINE_EXCEEDED',
  409: 'ABORTED',
  412: 'FAILED_PRECONDITION',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  501: 'UNIMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/**
 * A refusal by the host's own code around toolstream's routes (a global guard's 403, a
 * throttler's 429, Nest's 404 for an unknown path) in both bindings' shape: its HTTP status and
 * message kept (headers the host set on the response stay too), not logged as a failure.
 * JSON-RPC code: -32000 for 401 and 403, the custom error A2A 1.0 (section 3.3.2) names for
 * authentication and authorization errors; -32603 for 429 and 5xx, as toolstream's own limits
 * and unavailability; -32600 for any other 4xx.
 */
export function hostRefusal(httpStatus: number, message: string, response?: unknown): A2aHttpError {
  // Nest's exceptions keep the detail in their response body (a ValidationPipe's list of
  // violations), their message being then only "Bad Request Exception".
  const detail = typeof response === 'object' && response !== null ? (response as { message?: unknown }).message : undefined;
  if (typeof detail === 'string') message = detail;
  else if (Array.isArray(detail) && detail.length > 0 && detail.every((d) => typeof d === 'string')) message = detail.join('; ');
  const rpcStatus = RPC_STATUS_OF_HTTP[httpStatus] ?? (httpStatus >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT');
  const jsonRpcCode = httpStatus === 401 || httpStatus === 403 ? AUTH_JSON_RPC_CODE : httpStatus === 429 || httpStatus >= 500 ? -32603 : -32600;
  return new A2aHttpError(httpStatus, rpcStatus, jsonRpcCode, message);
}

/** An error as the A2A filters answer it: a Nest HttpException (the host's or Nest's own) as hostRefusal, anything else as it is. */
export function fromNest(caught: unknown): unknown {
  return caught instanceof HttpException ? hostRefusal(caught.getStatus(), caught.message, caught.getResponse()) : caught;
}

/**
 * Whether the application answered a call before its handler was done: a host's interceptor
 * that times handlers out (Nest's TimeoutInterceptor: `timeout(ms)`, then a
 * RequestTimeoutException its filter answers 408) answers a blocking send that outlasts it, and
 * the handler's own answer then has nowhere to go. Said as a warning, naming the status sent.
 */
export function answeredByHost(response: { headersSent: boolean; statusCode: number }, logger: { warn(message: string): void }, what: string): boolean {
  if (!response.headersSent) return false;
  logger.warn(`${what} not sent: the application had answered the request already (HTTP ${response.statusCode}; an interceptor's timeout?)`);
  return true;
}

/** The HTTP status a JSON-RPC error goes out with: that of an A2aHttpError, else 200. */
export function jsonRpcHttpStatus(err: unknown): { status: number; headers: Record<string, string> } {
  return err instanceof A2aHttpError ? { status: err.httpStatus, headers: err.headers } : { status: 200, headers: {} };
}

export const parseError = (detail: string): JsonRpcRequestError =>
  new JsonRpcRequestError(-32700, `Invalid JSON payload: ${echo(detail)}`);

export const invalidRequest = (detail: string): JsonRpcRequestError =>
  new JsonRpcRequestError(-32600, `Invalid JSON-RPC request: ${detail}`);

export const methodNotFound = (method: string, hint = ''): JsonRpcRequestError =>
  new JsonRpcRequestError(-32601, `Method not found: ${echo(method)}${hint ? ` (${hint})` : ''}`);

export function invalidParams(violations: FieldViolation[]): JsonRpcRequestError {
  // Field names are paths the validator built; a client's keys could make them long.
  violations = violations.map((v) => ({ field: echo(v.field), description: v.description }));
  const list = violations.map((v) => `${v.field}: ${v.description}`).join('; ');
  return new JsonRpcRequestError(-32602, `Invalid parameters: ${list}`, violations);
}

const now = (): string => new Date().toISOString();

export const taskNotFound = (taskId: string): A2AError =>
  new TaskNotFoundError({ message: `Task ${echo(taskId)} not found`, metadata: { taskId: echo(taskId), timestamp: now() } });

export const taskNotCancelable = (taskId: string, state: string): A2AError =>
  new TaskNotCancelableError({
    message: `Task ${taskId} cannot be canceled: it is already ${state}`,
    metadata: { taskId, state, timestamp: now() },
  });

export const unsupportedOperation = (message: string, metadata: Record<string, string> = {}): A2AError =>
  new UnsupportedOperationError({ message, metadata: { ...metadata, timestamp: now() } });

export const pushNotificationNotSupported = (): A2AError =>
  new PushNotificationNotSupportedError({ message: 'Push notifications are not supported by this agent' });

export const contentTypeNotSupported = (message: string): A2AError => new ContentTypeNotSupportedError({ message });

export const versionNotSupported = (requested: string, detail = ''): A2AError =>
  new VersionNotSupportedError({
    message: `A2A protocol version ${JSON.stringify(echo(requested))} is not supported${detail ? `: ${detail}` : ''}; supported: ${PROTOCOL_VERSIONS.join(', ')}`,
    metadata: { requestedVersion: echo(requested), supportedVersions: PROTOCOL_VERSIONS.join(',') },
  });

export const extensionSupportRequired = (uris: string[]): A2AError =>
  new ExtensionSupportRequiredError({
    message: `This agent requires the extension(s) ${uris.join(', ')}: list them in the A2A-Extensions header`,
    metadata: { extensions: uris.join(',') },
  });

/** Whether an error is one we raised on purpose; anything else is a bug, logged and hidden. */
export function isKnownError(err: unknown): err is A2AError | JsonRpcRequestError | A2aHttpError {
  return err instanceof A2AError || err instanceof JsonRpcRequestError || err instanceof A2aHttpError;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: ErrorDetail[];
}

/** The JSON-RPC `error` member: A2A codes with `google.rpc.ErrorInfo` / `BadRequest` in `data`. */
export function toJsonRpcErrorObject(err: unknown): JsonRpcErrorObject {
  if (err instanceof JsonRpcRequestError) {
    return err.fieldViolations.length > 0
      ? { code: err.code, message: err.message, data: [badRequest(err.fieldViolations)] }
      : { code: err.code, message: err.message };
  }
  if (err instanceof A2aHttpError) {
    return err.details.length > 0 ? { code: err.jsonRpcCode, message: err.message, data: err.details } : { code: err.jsonRpcCode, message: err.message };
  }
  if (err instanceof A2AError) {
    const { code, message, data } = toJsonRpcError(err);
    return { code, message, data: Array.isArray(data) ? data : undefined };
  }
  return { code: -32603, message: 'Internal error' };
}

/** The HTTP status and `google.rpc.Status` body of the HTTP+JSON binding (A2A 1.0, section 11.6). */
export function toRestError(err: unknown): { status: number; body: RestErrorBody } {
  if (err instanceof JsonRpcRequestError) {
    const status = err.code === -32601 ? 404 : 400;
    return {
      status,
      body: {
        error: {
          code: status,
          status: status === 404 ? 'NOT_FOUND' : 'INVALID_ARGUMENT',
          message: err.message,
          details: err.fieldViolations.length > 0 ? [badRequest(err.fieldViolations)] : [],
        },
      },
    };
  }
  if (err instanceof A2aHttpError) {
    return { status: err.httpStatus, body: { error: { code: err.httpStatus, status: err.rpcStatus, message: err.message, details: err.details } } };
  }
  if (err instanceof A2AError) {
    const status = restStatusFor(err);
    return { status, body: toRestErrorBody(err, status) };
  }
  return { status: 500, body: { error: { code: 500, status: 'INTERNAL', message: 'Internal error', details: [] } } };
}

function badRequest(violations: FieldViolation[]): ErrorDetail {
  return { '@type': BAD_REQUEST_TYPE, fieldViolations: violations };
}
