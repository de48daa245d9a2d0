import { checkToolCallFrame, type ToolCallArtifactData } from '../../extensions/tool-call-v1';
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

describe('TaskContentGuard.checkedFrame', () => {
  const checked = (payload: unknown): ToolCallArtifactData => {
    const frame = checkToolCallFrame(payload);
    if (typeof frame === 'string') throw new Error(frame);
    return frame;
  };
  const clean = checked({ toolCallId: 'c1', name: 'search', phase: 'started', args: { q: 'x', seq: 1 } });
  const withSecret = checked({ toolCallId: 'c1', name: 'search', phase: 'completed', result: { text: 'sk-live-123 in here' } });

  it('passes a clean frame on as it is, without a copy, when no credential is configured', () => {
    expect(guard([]).checkedFrame(clean)).toBe(clean);
    expect(guard([]).checkedFrame(withSecret)).toBe(withSecret);
  });

  it('copies a frame that is clean of keys and caps when a credential is configured, with the credential scrubbed', () => {
    const got = guard(['sk-live-123']).checkedFrame(withSecret);
    expect(got).not.toBe(withSecret);
    expect(got).toEqual({ toolCallId: 'c1', name: 'search', phase: 'completed', result: { text: '[redacted] in here' } });
    expect(guard(['sk-live-123']).checkedFrame(clean)).toEqual(clean);
    expect(guard(['sk-live-123']).checkedFrame(checked({ toolCallId: 'c3', name: 'search', phase: 'failed', error: 'failed with sk-live-123' }))).toEqual({
      toolCallId: 'c3',
      name: 'search',
      phase: 'failed',
      error: 'failed with [redacted]',
    });
  });

  it('redacts secret-named keys and caps each field, with or without credentials', () => {
    for (const content of [guard([]), guard(['sk-live-123'])]) {
      const token = checked({ toolCallId: 'c2', name: 'search', phase: 'started', args: { token: 'abc', q: 'y' } });
      expect(content.checkedFrame(token)).toEqual({ toolCallId: 'c2', name: 'search', phase: 'started', args: { token: '[redacted]', q: 'y' } });
      const long = content.checkedFrame(checked({ toolCallId: 'c4', name: 'search', phase: 'completed', result: 'y'.repeat(6000) }));
      const result = long.phase === 'completed' ? long.result : undefined;
      expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThanOrEqual(4096);
      expect(result).toMatch(/^y+…\[truncated: 6000 bytes\]$/);
    }
  });
});
