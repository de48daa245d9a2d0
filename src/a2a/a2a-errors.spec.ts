import {
  contentTypeNotSupported,
  hostRefusal,
  jsonRpcHttpStatus,
  extensionSupportRequired,
  invalidParams,
  invalidRequest,
  methodNotFound,
  parseError,
  pushNotificationNotSupported,
  taskNotCancelable,
  taskNotFound,
  toJsonRpcErrorObject,
  toRestError,
  unsupportedOperation,
  versionNotSupported,
} from './a2a-errors';

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';

describe('A2A errors on the wire', () => {
  it.each([
    ['parse error', parseError('bad'), -32700, 400, undefined],
    ['invalid request', invalidRequest('bad'), -32600, 400, undefined],
    ['method not found', methodNotFound('Nope'), -32601, 404, undefined],
    ['task not found', taskNotFound('t1'), -32001, 404, 'TASK_NOT_FOUND'],
    ['task not cancelable', taskNotCancelable('t1', 'TASK_STATE_COMPLETED'), -32002, 400, 'TASK_NOT_CANCELABLE'],
    ['push not supported', pushNotificationNotSupported(), -32003, 400, 'PUSH_NOTIFICATION_NOT_SUPPORTED'],
    ['unsupported operation', unsupportedOperation('no'), -32004, 400, 'UNSUPPORTED_OPERATION'],
    ['content type', contentTypeNotSupported('no files'), -32005, 400, 'CONTENT_TYPE_NOT_SUPPORTED'],
    ['extension required', extensionSupportRequired(['u']), -32008, 400, 'EXTENSION_SUPPORT_REQUIRED'],
    ['version', versionNotSupported('9.9'), -32009, 400, 'VERSION_NOT_SUPPORTED'],
  ])('%s: JSON-RPC %i, HTTP %i, ErrorInfo reason %s', (_name, error, code, status, reason) => {
    const rpc = toJsonRpcErrorObject(error);
    expect(rpc.code).toBe(code);
    expect(rpc.message).toBe(error.message);
    const rest = toRestError(error);
    expect(rest.status).toBe(status);
    expect(rest.body.error.code).toBe(status);
    if (reason) {
      expect(rpc.data).toEqual([expect.objectContaining({ '@type': ERROR_INFO, reason, domain: 'a2a-protocol.org' })]);
      expect(rest.body.error.details).toEqual([expect.objectContaining({ '@type': ERROR_INFO, reason })]);
    } else {
      expect(rpc.data).toBeUndefined();
    }
  });

  it('names each invalid field in the message and in a google.rpc.BadRequest detail', () => {
    const error = invalidParams([
      { field: 'message.parts', description: 'must not be empty' },
      { field: 'message.role', description: 'must be ROLE_USER' },
    ]);
    expect(error.message).toBe('Invalid parameters: message.parts: must not be empty; message.role: must be ROLE_USER');
    const detail = {
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: [
        { field: 'message.parts', description: 'must not be empty' },
        { field: 'message.role', description: 'must be ROLE_USER' },
      ],
    };
    expect(toJsonRpcErrorObject(error)).toEqual({ code: -32602, message: error.message, data: [detail] });
    expect(toRestError(error)).toEqual({ status: 400, body: { error: { code: 400, status: 'INVALID_ARGUMENT', message: error.message, details: [detail] } } });
  });

  it.each([
    [403, 'Forbidden resource', -32000, 'PERMISSION_DENIED'],
    [401, 'Unauthorized', -32000, 'UNAUTHENTICATED'],
    [429, 'ThrottlerException: Too Many Requests', -32603, 'RESOURCE_EXHAUSTED'],
    [404, 'Cannot GET /nope', -32600, 'NOT_FOUND'],
    [400, 'Bad Request', -32600, 'INVALID_ARGUMENT'],
    [408, 'Request Timeout', -32600, 'DEADLINE_EXCEEDED'],
    [418, "I'm a teapot", -32600, 'INVALID_ARGUMENT'],
    [503, 'Service Unavailable', -32603, 'UNAVAILABLE'],
    [500, 'Internal Server Error', -32603, 'INTERNAL'],
  ])("keeps a host's refusal (HTTP %i) as it was raised: its status and message, JSON-RPC %#", (status, message, code, rpcStatus) => {
    const refusal = hostRefusal(status, message);
    expect(toJsonRpcErrorObject(refusal)).toEqual({ code, message });
    expect(jsonRpcHttpStatus(refusal)).toEqual({ status, headers: {} });
    expect(toRestError(refusal)).toEqual({ status, body: { error: { code: status, status: rpcStatus, message, details: [] } } });
  });

  it("takes a host's refusal's detail from its response body, as Nest's exceptions keep it", () => {
    const violations = { statusCode: 400, error: 'Bad Request', message: ['name must be a string', 'age must be a number'] };
    expect(hostRefusal(400, 'Bad Request Exception', violations).message).toBe('name must be a string; age must be a number');
    expect(hostRefusal(403, 'Forbidden', { statusCode: 403, message: 'Not your task' }).message).toBe('Not your task');
    expect(hostRefusal(403, 'Forbidden resource', 'Forbidden resource').message).toBe('Forbidden resource');
    expect(hostRefusal(400, 'Bad Request Exception', { message: [1, 2] }).message).toBe('Bad Request Exception');
  });

  it('hides an unexpected error behind -32603 / 500 "Internal error", without message or stack', () => {
    const bug = new TypeError('cannot read properties of undefined (secret path /srv/app)');
    expect(toJsonRpcErrorObject(bug)).toEqual({ code: -32603, message: 'Internal error' });
    expect(JSON.stringify(toRestError(bug))).not.toContain('secret');
    expect(toRestError(bug).status).toBe(500);
  });
});
