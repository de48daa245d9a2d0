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
  const frames: ToolCallArtifactData[] = [
    { toolCallId: 'c1', name: 'search', phase: 'started', args: { q: 'x', seq: 1 } },
    { toolCallId: 'c1', name: 'search', phase: 'completed', result: { text: 'sk-live-123 in here' } },
    { toolCallId: 'c2', name: 'search', phase: 'started', args: { token: 'abc' } },
    { toolCallId: 'c2', name: 'search', phase: 'completed', result: 'y'.repeat(6000) },
    { toolCallId: 'c3', name: 'search', phase: 'failed', error: 'failed with sk-live-123' },
  ];

  it('gives what frame() gives for a checked frame: the frame itself when clean, else the same copy (capped, redacted, scrubbed)', () => {
    for (const content of [guard([]), guard(['sk-live-123'])]) {
      for (const payload of frames) {
        const checked = checkToolCallFrame(payload);
        if (typeof checked === 'string') throw new Error(checked);
        const expected = content.frame(checked);
        const got = content.checkedFrame(checked);
        expect(got).toEqual(expected);
        expect(got === checked).toBe(expected === checked);
      }
    }
  });
});
