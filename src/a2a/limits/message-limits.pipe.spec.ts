import { JsonRpcRequestError } from '../a2a-errors';
import { resolveA2aConfig } from '../a2a.module-definition';
import { checkTextLength, MessageLimitsPipe } from './message-limits.pipe';

describe('message limits', () => {
  const pipe = new MessageLimitsPipe(resolveA2aConfig({ maxPartsPerMessage: 3 }, {}));
  const body = (parts: unknown) => ({ message: { messageId: 'm', role: 'ROLE_USER', parts } });

  it('lets a message within maxPartsPerMessage through unchanged, and leaves shapes it cannot read to validation', () => {
    const ok = body([{ text: 'a' }, { text: 'b' }, { text: 'c' }]);
    expect(pipe.transform(ok)).toBe(ok);
    for (const odd of [undefined, null, 'x', [], { message: 'x' }, body('not a list')]) expect(pipe.transform(odd)).toBe(odd);
  });

  it('refuses more parts with -32602 naming the field, the count and the limit', () => {
    expect(() => pipe.transform(body(Array.from({ length: 100_000 }, () => ({}))))).toThrow(
      new JsonRpcRequestError(-32602, 'Invalid parameters: message.parts: has 100000 parts; the limit is 3 (maxPartsPerMessage)'),
    );
  });

  it('refuses text past maxTextLength', () => {
    expect(() => checkTextLength('x'.repeat(10), 10)).not.toThrow();
    expect(() => checkTextLength('x'.repeat(11), 10)).toThrow('message.parts: carry 11 characters of text; the limit is 10 (maxTextLength)');
  });

  it('has sane defaults and refuses nonsense at boot', () => {
    expect(resolveA2aConfig({}, {})).toMatchObject({
      maxBodyBytes: 1024 * 1024,
      maxPartsPerMessage: 64,
      maxTextLength: 100_000,
      maxHistoryLength: 100,
      maxFrameFieldBytes: 16 * 1024,
      drainTimeoutMs: 10_000,
    });
    expect(() => resolveA2aConfig({ maxPartsPerMessage: 0 }, {})).toThrow('maxPartsPerMessage must be a positive whole number');
    expect(resolveA2aConfig({ maxFrameFieldBytes: 10 }, {}).maxFrameFieldBytes).toBe(256);
  });
});
