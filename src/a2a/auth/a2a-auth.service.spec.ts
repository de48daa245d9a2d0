import { AgentCard } from '@a2a-js/sdk';
import { parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import { toolCallV1AgentExtension } from '../../extensions';
import { A2aHttpError, toJsonRpcErrorObject, toRestError } from '../a2a-errors';
import { resolveA2aConfig, type A2aModuleOptions } from '../a2a.module-definition';
import { AgentCardService } from '../agent-card.service';
import { A2aAuthService } from './a2a-auth.service';

const KEY_A = 'key-a-0123456789abcdef';
const KEY_B = 'key-b-0123456789abcdef';
const TOKEN = 'token-0123456789abcdef';

const service = (options: A2aModuleOptions, env: NodeJS.ProcessEnv = {}) => new A2aAuthService(resolveA2aConfig(options, env));

function refusal(auth: A2aAuthService, headers: Record<string, string>): A2aHttpError {
  try {
    auth.authenticate(headers);
  } catch (err) {
    expect(err).toBeInstanceOf(A2aHttpError);
    return err as A2aHttpError;
  }
  throw new Error('expected a refusal');
}

describe('A2aAuthService', () => {
  const auth = service({ auth: { apiKeys: [KEY_A, KEY_B], bearerTokens: [TOKEN] } });

  it('is off without credentials: every caller is anonymous', () => {
    const off = service({});
    expect(off.enabled).toBe(false);
    expect(off.authenticate({})).toBeUndefined();
  });

  it('resolves each key and token to its own stable caller id, which does not contain the secret', () => {
    const a = auth.authenticate({ 'x-api-key': KEY_A });
    const b = auth.authenticate({ 'x-api-key': KEY_B });
    const t = auth.authenticate({ authorization: `Bearer ${TOKEN}` });
    expect(new Set([a, b, t]).size).toBe(3);
    expect(service({ auth: { apiKeys: [KEY_B, KEY_A] } }).authenticate({ 'x-api-key': KEY_A })).toBe(a);
    for (const caller of [a, b, t]) expect(caller).not.toMatch(/0123456789abcdef/);
    expect(auth.authenticate({ authorization: `bearer   ${TOKEN} ` })).toBe(t);
  });

  it('answers 401 with a challenge per accepted scheme, naming what to send and never what was sent', () => {
    const missing = refusal(auth, {});
    expect(missing.httpStatus).toBe(401);
    expect(missing.message).toBe('Authentication required: send the header X-API-Key: <key> or Authorization: Bearer <token>');
    expect(missing.headers['WWW-Authenticate']).toBe('Bearer realm="a2a", ApiKey realm="a2a", header="X-API-Key"');
    const wrong = refusal(auth, { 'x-api-key': `${KEY_A}x`, authorization: 'Bearer nope-nope-nope-nope' });
    expect(wrong.message).toMatch(/^Invalid credentials/);
    expect(wrong.headers['WWW-Authenticate']).toContain('error="invalid_token"');
    expect(JSON.stringify([wrong.message, wrong.headers, wrong.details])).not.toContain(KEY_A);
    expect(refusal(auth, { authorization: `Basic ${TOKEN}` }).message).toMatch(/^Invalid credentials/);
  });

  it('fails on any invalid credential, whatever valid one comes with it, and on credentials of two callers', () => {
    expect(refusal(auth, { 'x-api-key': KEY_A, authorization: 'Bearer nope-nope-nope-nope' }).message).toMatch(/^Invalid credentials/);
    expect(refusal(auth, { 'x-api-key': 'nope-nope-nope-nope', authorization: `Bearer ${TOKEN}` }).message).toMatch(/^Invalid credentials/);
    expect(refusal(auth, { 'x-api-key': '', authorization: `Bearer ${TOKEN}` }).message).toMatch(/^Invalid credentials/);
    expect(refusal(auth, { 'x-api-key': KEY_A, authorization: `Bearer ${TOKEN}` }).message).toMatch(/^Credentials of more than one caller/);
    // Repeated headers, as the raw list has them.
    expect(() => auth.authenticate({}, ['X-API-Key', KEY_A, 'x-api-key', 'nope-nope-nope-nope'])).toThrow(/^Invalid credentials/);
    expect(() => auth.authenticate({}, ['Authorization', `Bearer ${TOKEN}`, 'authorization', 'Bearer nope-nope-nope'])).toThrow(/^Invalid credentials/);
    expect(auth.authenticate({}, ['X-API-Key', KEY_A, 'X-API-Key', KEY_A])).toBe(auth.authenticate({ 'x-api-key': KEY_A }));
    // A header of a scheme the server does not take is not read.
    expect(service({ auth: { apiKeys: [KEY_A] } }).authenticate({ 'x-api-key': KEY_A, authorization: 'Bearer something-else-entirely' })).toBeDefined();
  });

  it('maps the refusal onto both bindings: JSON-RPC custom error -32000, HTTP+JSON UNAUTHENTICATED', () => {
    const err = refusal(auth, {});
    expect(toJsonRpcErrorObject(err)).toEqual({
      code: -32000,
      message: err.message,
      data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'UNAUTHENTICATED', domain: 'toolstream', metadata: {} }],
    });
    expect(toRestError(err)).toMatchObject({ status: 401, body: { error: { code: 401, status: 'UNAUTHENTICATED', message: err.message } } });
  });

  it('reads TOOLSTREAM_API_KEYS / TOOLSTREAM_BEARER_TOKENS when the option is unset, and not when it is false', () => {
    const env = { TOOLSTREAM_API_KEYS: ` ${KEY_A}, ,${KEY_B}`, TOOLSTREAM_BEARER_TOKENS: TOKEN };
    expect(resolveA2aConfig({}, env).auth).toEqual({ apiKeys: [KEY_A, KEY_B], bearerTokens: [TOKEN] });
    expect(resolveA2aConfig({ auth: { apiKeys: [KEY_B] } }, env).auth).toEqual({ apiKeys: [KEY_B], bearerTokens: [] });
    expect(resolveA2aConfig({ auth: false }, env).auth).toEqual({ apiKeys: [], bearerTokens: [] });
  });

  it('refuses a weak secret at boot, naming its position but not the secret', () => {
    expect(() => resolveA2aConfig({ auth: { apiKeys: [KEY_A, 'short'] } })).toThrow('A2aModule auth.apiKeys[1] must be a string of at least 16 characters');
    expect(() => resolveA2aConfig({}, { TOOLSTREAM_BEARER_TOKENS: 'has space in it 0123456' })).toThrow(/auth.bearerTokens\[0\]/);
    expect(() => resolveA2aConfig({ auth: { apiKeys: ['short'] } })).not.toThrow(/short/);
  });
});

describe('the agent card declares the credentials', () => {
  const cards = (options: A2aModuleOptions) => new AgentCardService(resolveA2aConfig(options, {}), [toolCallV1AgentExtension()]);

  it('has no security without credentials', () => {
    expect(cards({}).card('http://h')).toMatchObject({ securitySchemes: {}, securityRequirements: [] });
    expect(cards({}).cardJson('http://h')).not.toHaveProperty('security');
  });

  it('declares an API-key scheme (header X-API-Key) and a bearer scheme, either one sufficing', () => {
    const card = cards({ auth: { apiKeys: [KEY_A], bearerTokens: [TOKEN] } }).card('http://h');
    expect(card.securitySchemes).toEqual({
      apiKey: { scheme: { $case: 'apiKeySecurityScheme', value: expect.objectContaining({ location: 'header', name: 'X-API-Key' }) } },
      bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: expect.objectContaining({ scheme: 'Bearer' }) } },
    });
    expect(card.securityRequirements).toEqual([{ schemes: { apiKey: { list: [] } } }, { schemes: { bearer: { list: [] } } }]);
  });

  it('serves JSON that the 1.0 codec and the 0.3 card parser both read, without any secret in it', () => {
    const json = cards({ auth: { apiKeys: [KEY_A], bearerTokens: [TOKEN] } }).cardJson('http://h');
    expect(JSON.stringify(json)).not.toMatch(/0123456789abcdef/);
    expect(AgentCard.fromJSON(json).securitySchemes.apiKey.scheme).toEqual({
      $case: 'apiKeySecurityScheme',
      value: expect.objectContaining({ location: 'header', name: 'X-API-Key' }),
    });
    const { supportedInterfaces: _v1, ...legacyView } = json;
    const legacy = parseLegacyAgentCard(legacyView);
    expect(legacy.securitySchemes.bearer.scheme?.$case).toBe('httpAuthSecurityScheme');
    expect(legacy.securityRequirements).toHaveLength(2);
  });
});
