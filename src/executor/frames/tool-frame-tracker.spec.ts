import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import type { ExecutorEvent } from '../executor.types';
import { describeTurn, isToolStreamEvent, ToolFrameTracker } from './tool-frame-tracker';

const human = new HumanMessage('weather in Paris and time in Tokyo');
const turn = new AIMessage({
  content: '',
  tool_calls: [
    { id: 'c1', name: 'weather', args: { city: 'Paris', apiKey: 'k' }, type: 'tool_call' },
    { id: 'c2', name: 'world_clock', args: { place: 'Tokyo' }, type: 'tool_call' },
  ],
});
const results = [
  new ToolMessage({ tool_call_id: 'c1', name: 'weather', content: '{"tempC":18}' }),
  new ToolMessage({ tool_call_id: 'c2', name: 'world_clock', content: 'Error: boom\n Please fix your mistakes.', status: 'error' }),
];

/** A clock that ticks one second per reading, so every timestamp is distinct and checkable. */
function tickingClock(): () => number {
  let t = Date.parse('2026-01-01T00:00:00.000Z');
  return () => (t += 1000);
}

const frames = (events: ExecutorEvent[]) => events.flatMap((e) => (e.type === 'toolFrame' ? [e.frame] : []));
/** The `result` of the one frame among the events (undefined when it has none). */
const resultOf = (events: ExecutorEvent[]): unknown => {
  const [frame] = frames(events);
  return frame?.phase === 'completed' ? frame.result : undefined;
};

describe('ToolFrameTracker', () => {
  it('treats the first snapshot as the input and starts each turn with its progress line', () => {
    const tracker = new ToolFrameTracker({}, tickingClock());
    expect(tracker.thinking()).toEqual({ type: 'progress', text: 'thinking', step: 0 });
    expect(tracker.fromValues([human])).toEqual([]);
    const events = tracker.fromValues([human, turn]);
    expect(events[0]).toEqual({
      type: 'progress',
      step: 1,
      text: 'running weather; running world_clock',
      tools: [
        { toolCallId: 'c1', name: 'weather', args: { city: 'Paris', apiKey: '[redacted]' } },
        { toolCallId: 'c2', name: 'world_clock', args: { place: 'Tokyo' } },
      ],
    });
    expect(frames(events)).toEqual([
      { toolCallId: 'c1', name: 'weather', phase: 'started', args: { city: 'Paris', apiKey: '[redacted]' }, timestamp: '2026-01-01T00:00:01.000Z' },
      { toolCallId: 'c2', name: 'world_clock', phase: 'started', args: { place: 'Tokyo' }, timestamp: '2026-01-01T00:00:02.000Z' },
    ]);
    expect(tracker.openCount).toBe(2);
  });

  it('emits a terminal frame from the tools stream at once and not again from the state', () => {
    const tracker = new ToolFrameTracker({}, tickingClock());
    tracker.fromValues([human]);
    tracker.fromValues([human, turn]);
    expect(tracker.fromToolEvent({ event: 'on_tool_start', toolCallId: 'c1', name: 'weather', input: { city: 'Paris' } })).toEqual([]);
    const live = tracker.fromToolEvent({ event: 'on_tool_end', toolCallId: 'c1', name: 'weather', output: results[0] });
    expect(frames(live)).toEqual([{ toolCallId: 'c1', name: 'weather', phase: 'completed', result: { tempC: 18 }, timestamp: '2026-01-01T00:00:03.000Z' }]);
    const fromState = tracker.fromValues([human, turn, ...results]);
    // c1 was already reported live; only c2 (whose end the tools stream never reported) remains.
    expect(frames(fromState)).toEqual([{ toolCallId: 'c2', name: 'world_clock', phase: 'failed', error: 'boom', timestamp: '2026-01-01T00:00:04.000Z' }]);
    expect(tracker.openCount).toBe(0);
  });

  it('gives a result parsed from its JSON text the same hygiene as any other: clean ones as they are, secrets redacted, large ones capped', () => {
    const tracker = new ToolFrameTracker({ maxFieldBytes: 256 }, tickingClock());
    const ended = (id: string, content: unknown) => {
      tracker.fromToolEvent({ event: 'on_tool_start', toolCallId: id, name: 'probe', input: {} });
      const output = new ToolMessage({ tool_call_id: id, name: 'probe', content: content as string });
      return resultOf(tracker.fromToolEvent({ event: 'on_tool_end', toolCallId: id, name: 'probe', output }));
    };
    expect(ended('clean', '{"seq":1,"ok":true,"tags":["a","b"],"at":null}')).toEqual({ seq: 1, ok: true, tags: ['a', 'b'], at: null });
    expect(ended('secret', '{"user":"ann","session":{"accessToken":"t0k"}}')).toEqual({ user: 'ann', session: { accessToken: '[redacted]' } });
    const big = ended('big', JSON.stringify({ text: 'x'.repeat(1_000) })) as { text: string };
    expect(JSON.stringify(big).length).toBeLessThanOrEqual(256);
    expect(big.text).toMatch(/…\[truncated: 1000 bytes\]$/);
    expect(ended('array', '[1, {"password": "p"}]')).toEqual([1, { password: '[redacted]' }]);
    // Not JSON text, or content blocks: as before.
    expect(ended('text', 'plain answer')).toBe('plain answer');
    expect(ended('blocks', [{ type: 'text', text: 'hi' }])).toEqual([{ type: 'text', text: 'hi' }]);
    // A raw value that is not a message is copied, never passed on as the tool's own object.
    const own = { n: 1 };
    tracker.fromToolEvent({ event: 'on_tool_start', toolCallId: 'raw', name: 'probe', input: {} });
    const raw = resultOf(tracker.fromToolEvent({ event: 'on_tool_end', toolCallId: 'raw', name: 'probe', output: own }));
    expect(raw).toEqual({ n: 1 });
    expect(raw).not.toBe(own);
  });

  it('reports a tool error with the thrown message', () => {
    const tracker = new ToolFrameTracker();
    tracker.fromValues([human]);
    tracker.fromValues([human, turn]);
    const events = tracker.fromToolEvent({ event: 'on_tool_error', toolCallId: 'c2', name: 'world_clock', error: new RangeError('bad zone') });
    expect(frames(events)).toMatchObject([{ toolCallId: 'c2', phase: 'failed', error: 'bad zone' }]);
  });

  it('gives a result whose start it never saw a started frame first', () => {
    const tracker = new ToolFrameTracker();
    const events = tracker.fromToolEvent({ event: 'on_tool_end', toolCallId: 'x1', name: 'lookup', output: 'ok' });
    expect(frames(events).map((f) => f.phase)).toEqual(['started', 'completed']);
    expect(tracker.fromToolEvent({ event: 'on_tool_end', toolCallId: 'x1', name: 'lookup', output: 'again' })).toEqual([]);
  });

  it('leaves tool events without a call id to the state, which pairs them by order', () => {
    const tracker = new ToolFrameTracker();
    expect(tracker.fromToolEvent({ event: 'on_tool_start', name: 'weather', input: {} })).toEqual([]);
    expect(tracker.fromToolEvent({ event: 'on_tool_end', toolCallId: '', name: 'weather', output: 'x' })).toEqual([]);
  });

  it('gives a call that reuses the id of an ended call a fresh id, from both sources', () => {
    const tracker = new ToolFrameTracker();
    const call = (n: number) => new AIMessage({ content: '', tool_calls: [{ id: 'call_0', name: 'weather', args: { n }, type: 'tool_call' }] });
    const result = (n: number) => new ToolMessage({ tool_call_id: 'call_0', name: 'weather', content: `{"n":${n}}` });
    const seen: ExecutorEvent[] = [];
    tracker.fromValues([human]);
    seen.push(...tracker.fromValues([human, call(1)]));
    seen.push(...tracker.fromToolEvent({ event: 'on_tool_start', toolCallId: 'call_0', name: 'weather', input: { n: 1 } }));
    seen.push(...tracker.fromToolEvent({ event: 'on_tool_end', toolCallId: 'call_0', name: 'weather', output: result(1) }));
    seen.push(...tracker.fromValues([human, call(1), result(1)]));
    seen.push(...tracker.fromValues([human, call(1), result(1), call(2)]));
    seen.push(...tracker.fromToolEvent({ event: 'on_tool_start', toolCallId: 'call_0', name: 'weather', input: { n: 2 } }));
    expect(tracker.openCount).toBe(1);
    seen.push(...tracker.fromToolEvent({ event: 'on_tool_end', toolCallId: 'call_0', name: 'weather', output: result(2) }));
    seen.push(...tracker.fromValues([human, call(1), result(1), call(2), result(2)]));
    expect(frames(seen).map((f) => [f.toolCallId, f.phase, f.phase === 'started' ? f.args : f.phase === 'completed' ? f.result : f.error])).toEqual([
      ['call_0', 'started', { n: 1 }],
      ['call_0', 'completed', { n: 1 }],
      ['call_0~2', 'started', { n: 2 }],
      ['call_0~2', 'completed', { n: 2 }],
    ]);
    expect(tracker.openCount).toBe(0);
  });

  it('closes every open tool with the same error', () => {
    const tracker = new ToolFrameTracker();
    tracker.fromValues([human]);
    tracker.fromValues([human, turn]);
    tracker.fromToolEvent({ event: 'on_tool_end', toolCallId: 'c1', name: 'weather', output: 'x' });
    expect(frames(tracker.closeOpen('cancelled'))).toMatchObject([{ toolCallId: 'c2', name: 'world_clock', phase: 'failed', error: 'cancelled' }]);
    expect(tracker.closeOpen('cancelled')).toEqual([]);
  });

  it('recognises tools-stream chunks', () => {
    expect(isToolStreamEvent({ event: 'on_tool_end', name: 'x', toolCallId: 'c' })).toBe(true);
    expect(isToolStreamEvent({ event: 'on_chain_end', name: 'x' })).toBe(false);
    expect(isToolStreamEvent(null)).toBe(false);
    expect(describeTurn([])).toBe('');
  });
});

describe('ToolFrameTracker: frames forwarded from a delegated agent', () => {
  const ask = (id: string) => ({ event: 'on_tool_start' as const, toolCallId: id, name: 'researcher', input: { question: 'weather in Oslo' } });
  const plain = (events: ExecutorEvent[]) =>
    frames(events).map((f) => `${f.phase} ${f.toolCallId}${f.parentToolCallId ? ` < ${f.parentToolCallId}` : ''}${f.phase === 'failed' ? `: ${f.error}` : ''}`);

  it('nests them under the delegating call with ids unique in the run, keeping their own nesting', () => {
    const tracker = new ToolFrameTracker({}, tickingClock());
    tracker.fromToolEvent(ask('d1'));
    tracker.fromToolEvent(ask('d2'));
    const events = [
      ...tracker.fromForwarded('d1', { toolCallId: 'call_1', name: 'weather', phase: 'started', args: { city: 'Oslo' } }),
      // the other agent uses the same id: no collision
      ...tracker.fromForwarded('d2', { toolCallId: 'call_1', name: 'weather', phase: 'started', args: { city: 'Rome' } }),
      // a frame the other agent itself forwarded from a third one keeps its place below
      ...tracker.fromForwarded('d1', { toolCallId: 'call_2/call_1', name: 'world_clock', parentToolCallId: 'call_2', phase: 'started' }),
      ...tracker.fromForwarded('d1', { toolCallId: 'call_1', name: 'weather', phase: 'completed', result: { tempC: 3 } }),
      ...tracker.fromForwarded('d1', { toolCallId: 'call_1', name: 'weather', phase: 'completed', result: { tempC: 3 } }),
    ];
    expect(plain(events)).toEqual([
      'started d1/call_1 < d1',
      'started d2/call_1 < d2',
      'started d1/call_2/call_1 < d1/call_2',
      'completed d1/call_1 < d1',
    ]);
    expect(frames(events)[0]).toMatchObject({ name: 'weather', args: { city: 'Oslo' }, timestamp: '2026-01-01T00:00:03.000Z' });
  });

  it('starts a call whose start it never saw, and closes what is still open when the delegating call ends', () => {
    const tracker = new ToolFrameTracker({}, tickingClock());
    tracker.fromToolEvent(ask('d1'));
    const early = tracker.fromForwarded('d1', { toolCallId: 'c9', name: 'read_doc', phase: 'failed', error: 'no page' });
    expect(plain(early)).toEqual(['started d1/c9 < d1', 'failed d1/c9 < d1: no page']);
    tracker.fromForwarded('d1', { toolCallId: 'c1', name: 'weather', phase: 'started' });
    tracker.fromForwarded('d1', { toolCallId: 'c2', name: 'slow_task', phase: 'started' });
    const end = tracker.fromToolEvent({ event: 'on_tool_error', toolCallId: 'd1', name: 'researcher', error: new Error('researcher: the stream ended') });
    expect(plain(end)).toEqual([
      'failed d1/c2 < d1: researcher: the stream ended',
      'failed d1/c1 < d1: researcher: the stream ended',
      'failed d1: researcher: the stream ended',
    ]);
    // late frames and narration of an ended call are dropped
    expect(tracker.fromForwarded('d1', { toolCallId: 'c3', name: 'weather', phase: 'started' })).toEqual([]);
    expect(tracker.forwardedNarration('d1', 'researcher: late')).toEqual([]);
    expect(tracker.fromForwarded('nobody', { toolCallId: 'c3', name: 'weather', phase: 'started' })).toEqual([]);
  });

  it('a delegating call that completes settles its open nested calls as unfinished', () => {
    const tracker = new ToolFrameTracker({}, tickingClock());
    tracker.fromToolEvent(ask('d1'));
    tracker.fromForwarded('d1', { toolCallId: 'c1', name: 'weather', phase: 'started' });
    const end = tracker.fromToolEvent({ event: 'on_tool_end', toolCallId: 'd1', name: 'researcher', output: 'done' });
    expect(plain(end)).toEqual(['failed d1/c1 < d1: the delegated agent ended before this call finished', 'completed d1']);
  });

  it('cancel closes forwarded calls first, then the local ones', () => {
    const tracker = new ToolFrameTracker({}, tickingClock());
    tracker.fromToolEvent(ask('d1'));
    tracker.fromForwarded('d1', { toolCallId: 'c1', name: 'weather', phase: 'started' });
    expect(plain(tracker.closeOpen('cancelled'))).toEqual(['failed d1/c1 < d1: cancelled', 'failed d1: cancelled']);
    expect(tracker.openCount).toBe(0);
  });

  it('passes a running call\'s forwarded narration on with the current step', () => {
    const tracker = new ToolFrameTracker({}, tickingClock());
    tracker.fromValues([human]);
    tracker.fromValues([human, turn]);
    expect(tracker.forwardedNarration('c1', 'researcher: checking the weather')).toEqual([
      { type: 'progress', text: 'researcher: checking the weather', step: 1 },
    ]);
  });
});
