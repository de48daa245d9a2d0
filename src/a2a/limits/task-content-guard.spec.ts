import { TaskContentGuard } from './task-content-guard';

const guard = (secrets: string[]) => new TaskContentGuard({ maxFrameFieldBytes: 4096, auth: { apiKeys: secrets, bearerTokens: [] } as never });

describe('TaskContentGuard.textStream', () => {
  it('scrubs a secret split across pieces, holding back only what could begin one', () => {
    const scrub = guard(['sk-live-123456']).textStream();
    const out = [scrub('the key is sk-li', false), scrub('ve-1234', false), scrub('56, and sk-', false), scrub('not a key', true)];
    expect(out).toEqual(['the key is ', '', '[redacted], and ', 'sk-not a key']);
    expect(out.join('')).toBe('the key is [redacted], and sk-not a key');
  });

  it('lets a held start out with the last piece, and passes text through untouched without secrets', () => {
    const scrub = guard(['sk-live-123456']).textStream();
    expect([scrub('ends with sk-live', false), scrub('', true)]).toEqual(['ends with ', 'sk-live']);
    const none = guard([]).textStream();
    expect([none('sk-li', false), none('ve', true)]).toEqual(['sk-li', 've']);
  });
});
