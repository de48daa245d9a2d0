import {
  A2AError,
  ContentTypeNotSupportedError,
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

export const parseError = (detail: string): JsonRpcRequestError =>
  new JsonRpcRequestError(-32700, `Invalid JSON payload: ${detail}`);

export const invalidRequest = (detail: string): JsonRpcRequestError =>
  new JsonRpcRequestError(-32600, `Invalid JSON-RPC request: ${detail}`);

export const methodNotFound = (method: string, hint = ''): JsonRpcRequestError =>
  new JsonRpcRequestError(-32601, `Method not found: ${method}${hint ? ` (${hint})` : ''}`);

export function invalidParams(violations: FieldViolation[]): JsonRpcRequestError {
  const list = violations.map((v) => `${v.field}: ${v.description}`).join('; ');
  return new JsonRpcRequestError(-32602, `Invalid parameters: ${list}`, violations);
}

const now = (): string => new Date().toISOString();

export const taskNotFound = (taskId: string): A2AError =>
  new TaskNotFoundError({ message: `Task ${taskId} not found`, metadata: { taskId, timestamp: now() } });

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
    message: `A2A protocol version ${JSON.stringify(requested)} is not supported${detail ? `: ${detail}` : ''}; supported: ${PROTOCOL_VERSIONS.join(', ')}`,
    metadata: { requestedVersion: requested, supportedVersions: PROTOCOL_VERSIONS.join(',') },
  });

export const extensionSupportRequired = (uris: string[]): A2AError =>
  new ExtensionSupportRequiredError({
    message: `This agent requires the extension(s) ${uris.join(', ')}: list them in the A2A-Extensions header`,
    metadata: { extensions: uris.join(',') },
  });

/** Whether an error is one we raised on purpose; anything else is a bug, logged and hidden. */
export function isKnownError(err: unknown): err is A2AError | JsonRpcRequestError {
  return err instanceof A2AError || err instanceof JsonRpcRequestError;
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
  if (err instanceof A2AError) {
    const status = restStatusFor(err);
    return { status, body: toRestErrorBody(err, status) };
  }
  return { status: 500, body: { error: { code: 500, status: 'INTERNAL', message: 'Internal error', details: [] } } };
}

function badRequest(violations: FieldViolation[]): ErrorDetail {
  return { '@type': BAD_REQUEST_TYPE, fieldViolations: violations };
}
