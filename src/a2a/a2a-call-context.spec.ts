import { VersionNotSupportedError, ExtensionSupportRequiredError } from '@a2a-js/sdk/errors';
import { TOOL_CALL_V1_EXTENSION_URI, toolCallV1AgentExtension } from '../extensions';
import { extensionHeaders, negotiate, negotiateVersion, type A2aCallContext } from './a2a-call-context';

const OTHER = 'https://example.com/ext/other-v1';
const card = [toolCallV1AgentExtension(), { uri: OTHER, description: '', required: false, params: undefined }];

describe('negotiateVersion', () => {
  it.each([
    [undefined, '0.3'],
    ['', '0.3'],
    ['0.3', '0.3'],
    ['1.0', '1.0'],
    [' 1.0 ', '1.0'],
    ['1.0.7', '1.0'],
    ['01.00', '1.0'],
  ])('A2A-Version %p is %s', (header, version) => {
    expect(negotiateVersion({ headers: header === undefined ? {} : { 'a2a-version': header } })).toBe(version);
  });

  it('reads the version from the query parameter when no header is sent', () => {
    expect(negotiateVersion({ headers: {}, query: { 'A2A-Version': '1.0' } })).toBe('1.0');
  });

  it.each(['0.5', '2.0', '1', 'latest', '1.0-beta'])('rejects %p with VersionNotSupportedError naming the supported versions', (header) => {
    let error: unknown;
    try {
      negotiateVersion({ headers: { 'a2a-version': header } });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(VersionNotSupportedError);
    expect((error as Error).message).toContain('supported: 0.3, 1.0');
  });
});

describe('negotiate (extensions)', () => {
  it('sends frames to a client that lists tool-call-v1, and echoes it', () => {
    const ctx = negotiate({ headers: { 'a2a-version': '1.0', 'a2a-extensions': `${OTHER}, ${TOOL_CALL_V1_EXTENSION_URI}` } }, card, true, undefined);
    expect(ctx).toMatchObject({ version: '1.0', toolFrames: true, activated: [OTHER, TOOL_CALL_V1_EXTENSION_URI] });
    expect(extensionHeaders(ctx)).toEqual({ 'A2A-Extensions': `${OTHER}, ${TOOL_CALL_V1_EXTENSION_URI}` });
  });

  it('sends no frames to a client that lists other extensions only', () => {
    const ctx = negotiate({ headers: { 'a2a-extensions': OTHER } }, card, true, undefined);
    expect(ctx).toMatchObject({ toolFrames: false, activated: [OTHER] });
  });

  it('sends frames to a client without any extension header unless the option is off', () => {
    expect(negotiate({ headers: {} }, card, true, undefined)).toMatchObject({ toolFrames: true, activated: [TOOL_CALL_V1_EXTENSION_URI] });
    expect(negotiate({ headers: {} }, card, false, undefined)).toMatchObject({ toolFrames: false, activated: [] });
  });

  it('reads the 0.3 X-A2A-Extensions header and echoes under both names for 0.3', () => {
    const ctx = negotiate({ headers: { 'x-a2a-extensions': TOOL_CALL_V1_EXTENSION_URI } }, card, false, undefined);
    expect(ctx).toMatchObject({ version: '0.3', toolFrames: true });
    expect(extensionHeaders(ctx)).toEqual({ 'A2A-Extensions': TOOL_CALL_V1_EXTENSION_URI, 'X-A2A-Extensions': TOOL_CALL_V1_EXTENSION_URI });
  });

  it('gives requests that negotiated alike the same extension headers, made once and read only', () => {
    const v1 = { 'a2a-version': '1.0', 'a2a-extensions': TOOL_CALL_V1_EXTENSION_URI };
    const first = extensionHeaders(negotiate({ headers: v1 }, card, true, 'alice'));
    expect(extensionHeaders(negotiate({ headers: { ...v1 } }, card, true, 'bob'))).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    const v03 = extensionHeaders(negotiate({ headers: { 'a2a-extensions': TOOL_CALL_V1_EXTENSION_URI } }, card, true, 'alice'));
    expect(v03).toEqual({ 'A2A-Extensions': TOOL_CALL_V1_EXTENSION_URI, 'X-A2A-Extensions': TOOL_CALL_V1_EXTENSION_URI });
    expect(first).toEqual({ 'A2A-Extensions': TOOL_CALL_V1_EXTENSION_URI });
    expect(extensionHeaders(negotiate({ headers: {} }, card, false, undefined))).toEqual({});
  });

  it('refuses a client that does not list an extension the card marks required', () => {
    const strict = [...card, { uri: 'https://example.com/ext/must', description: '', required: true, params: undefined }];
    expect(() => negotiate({ headers: {} }, strict, true, undefined)).toThrow(ExtensionSupportRequiredError);
    expect(negotiate({ headers: { 'a2a-extensions': 'https://example.com/ext/must' } }, strict, true, undefined).toolFrames).toBe(false);
  });
});

describe('negotiate (remembered per header set)', () => {
  it('answers a repeated header set as the first time, each request with its own caller', () => {
    const headers = { 'a2a-version': '1.0', 'a2a-extensions': `${OTHER}, ${TOOL_CALL_V1_EXTENSION_URI}` };
    const first = negotiate({ headers: { ...headers } }, card, true, 'alice');
    const again = negotiate({ headers: { ...headers } }, card, true, 'bob');
    expect(again).toMatchObject({ version: '1.0', toolFrames: true, activated: [OTHER, TOOL_CALL_V1_EXTENSION_URI], caller: 'bob' });
    expect(first.caller).toBe('alice');
    expect(() => (again.activated as string[]).push('x')).toThrow(TypeError);
  });

  it('keeps the option, the card and the query version apart', () => {
    expect(negotiate({ headers: {} }, card, true, undefined).toolFrames).toBe(true);
    expect(negotiate({ headers: {} }, card, false, undefined).toolFrames).toBe(false);
    expect(negotiate({ headers: {} }, [], true, undefined).activated).toEqual([TOOL_CALL_V1_EXTENSION_URI]);
    expect(negotiate({ headers: {}, query: { 'A2A-Version': '1.0' } }, card, true, undefined).version).toBe('1.0');
    expect(negotiate({ headers: {}, query: {} }, card, true, undefined).version).toBe('0.3');
  });

  it('answers every header set as a fresh negotiation would, in any order', () => {
    const sets: Record<string, string | string[]>[] = [
      { 'a2a-version': '1.0' },
      { 'a2a-version': '1.0', 'a2a-extensions': '' },
      { 'a2a-version': '1.0', 'a2a-extensions': OTHER },
      { 'a2a-version': '1.0', 'x-a2a-extensions': OTHER },
      { 'a2a-version': '1.0', 'a2a-extensions': TOOL_CALL_V1_EXTENSION_URI },
      { 'a2a-version': '', 'a2a-extensions': OTHER },
      {},
      { 'a2a-extensions': OTHER },
      { 'x-a2a-extensions': OTHER },
      { 'x-a2a-extensions': [OTHER, TOOL_CALL_V1_EXTENSION_URI] },
      { 'a2a-version': '1.0', 'a2a-extensions': [OTHER, TOOL_CALL_V1_EXTENSION_URI] },
    ];
    const shared = [...card];
    const answer = (ctx: A2aCallContext): unknown => ({ version: ctx.version, toolFrames: ctx.toolFrames, activated: [...ctx.activated] });
    for (const order of [sets, [...sets].reverse()]) {
      for (const headers of order) {
        for (const frames of [true, false]) {
          // A fresh copy of the card list has nothing remembered.
          expect(answer(negotiate({ headers: { ...headers } }, shared, frames, undefined))).toEqual(answer(negotiate({ headers: { ...headers } }, [...card], frames, undefined)));
        }
      }
    }
  });

  it('refuses a refused header set every time', () => {
    const strict = [...card, { uri: 'https://example.com/ext/must', description: '', required: true, params: undefined }];
    for (let i = 0; i < 2; i++) expect(() => negotiate({ headers: { 'a2a-version': '1.0' } }, strict, true, undefined)).toThrow(ExtensionSupportRequiredError);
    for (let i = 0; i < 2; i++) expect(() => negotiate({ headers: { 'a2a-version': '7.0' } }, card, true, undefined)).toThrow(VersionNotSupportedError);
  });
});
