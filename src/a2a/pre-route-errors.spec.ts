import { A2aHttpError, JsonRpcRequestError, toJsonRpcErrorObject, toRestError } from './a2a-errors';
import { bodyReadError } from './pre-route-errors';

/** What body-parser raises (an http-errors object): a message, a status, a type, sometimes a limit. */
const httpError = (status: number, message: string, props: Record<string, unknown>) => Object.assign(new Error(message), { status, ...props });

describe("bodyReadError: Express's body-parser errors in A2A terms", () => {
  it('too large: HTTP 413 on both bindings, -32600 on JSON-RPC, naming the limit and what sets it', () => {
    const err = bodyReadError(httpError(413, 'request entity too large', { type: 'entity.too.large', limit: 2048 }), 'maxBodyBytes');
    expect(err).toBeInstanceOf(A2aHttpError);
    expect(toJsonRpcErrorObject(err)).toMatchObject({ code: -32600, message: 'The request body exceeds the limit of 2048 bytes (maxBodyBytes)' });
    expect(toRestError(err)).toMatchObject({ status: 413, body: { error: { code: 413, status: 'INVALID_ARGUMENT' } } });
    const fromApp = bodyReadError(httpError(413, 'too large', { type: 'entity.too.large', limit: 102400 }));
    expect((fromApp as Error).message).toBe("The request body exceeds the limit of 102400 bytes (the application's JSON parser limit)");
  });

  it('malformed JSON: a parse error; unsupported encoding or charset: 415; other read failures: 400', () => {
    const parse = bodyReadError(Object.assign(new SyntaxError('Unexpected token'), { type: 'entity.parse.failed', status: 400 }));
    expect(parse).toEqual(new JsonRpcRequestError(-32700, 'Invalid JSON payload: Unexpected token'));
    expect(toRestError(bodyReadError(httpError(415, 'unsupported content encoding "zz"', { type: 'encoding.unsupported' }))).status).toBe(415);
    expect(toRestError(bodyReadError(httpError(415, 'unsupported charset "LATIN1"', { type: 'charset.unsupported' }))).status).toBe(415);
    const inflate = bodyReadError(Object.assign(new Error('incorrect header check'), { status: 400 }));
    expect(toJsonRpcErrorObject(inflate)).toEqual({ code: -32600, message: 'The request body could not be read: incorrect header check' });
  });

  it('leaves any other error as it is', () => {
    const other = new Error('boom');
    expect(bodyReadError(other)).toBe(other);
    expect(bodyReadError('text')).toBe('text');
  });
});
