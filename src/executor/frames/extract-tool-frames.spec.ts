import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { cursorAt, extractToolFrames, fallbackToolCallId, START_CURSOR, type FrameCursor } from './extract-tool-frames';

const ai = (calls: Array<{ id?: string; name: string; args?: Record<string, unknown> }>): AIMessage =>
  new AIMessage({ content: '', tool_calls: calls.map((c) => ({ id: c.id, name: c.name, args: c.args ?? {}, type: 'tool_call' as const })) });
const result = (id: string, content: string, status: 'success' | 'error' = 'success', name = 'weather'): ToolMessage =>
  new ToolMessage({ tool_call_id: id, content, status, name });

describe('extractToolFrames', () => {
  it('gives a started frame per tool call and a terminal frame per tool result', () => {
    const messages = [
      new HumanMessage('weather in Paris and time in Tokyo'),
      ai([
        { id: 'c1', name: 'weather', args: { city: 'Paris' } },
        { id: 'c2', name: 'world_clock', args: { place: 'Tokyo' } },
      ]),
      result('c1', '{"city":"Paris","temperatureC":18}'),
      result('c2', 'Error: unknown city or time zone "Tokio"\n Please fix your mistakes.', 'error', 'world_clock'),
      new AIMessage('done'),
    ];
    const { frames, turns, cursor } = extractToolFrames(messages);
    expect(frames).toEqual([
      { toolCallId: 'c1', name: 'weather', phase: 'started', args: { city: 'Paris' } },
      { toolCallId: 'c2', name: 'world_clock', phase: 'started', args: { place: 'Tokyo' } },
      { toolCallId: 'c1', name: 'weather', phase: 'completed', result: { city: 'Paris', temperatureC: 18 } },
      { toolCallId: 'c2', name: 'world_clock', phase: 'failed', error: 'unknown city or time zone "Tokio"' },
    ]);
    expect(turns).toEqual([
      {
        at: 0,
        calls: [
          { toolCallId: 'c1', name: 'weather', args: { city: 'Paris' } },
          { toolCallId: 'c2', name: 'world_clock', args: { place: 'Tokyo' } },
        ],
        said: '',
      },
    ]);
    expect(cursor).toEqual({ next: 5, pending: [] });
  });

  it('keeps a plain-text result as text and reads text content blocks', () => {
    const messages = [ai([{ id: 'c1', name: 'echo' }, { id: 'c2', name: 'echo' }]), result('c1', '42', 'success', 'echo')];
    messages.push(new ToolMessage({ tool_call_id: 'c2', name: 'echo', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }));
    const { frames } = extractToolFrames(messages);
    expect(frames.slice(2)).toEqual([
      { toolCallId: 'c1', name: 'echo', phase: 'completed', result: '42' },
      { toolCallId: 'c2', name: 'echo', phase: 'completed', result: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
    ]);
  });

  it('emits each frame once when the same state is yielded again', () => {
    const messages: BaseMessage[] = [new HumanMessage('hi'), ai([{ id: 'c1', name: 'weather' }])];
    const first = extractToolFrames(messages, START_CURSOR);
    expect(first.frames).toHaveLength(1);
    const again = extractToolFrames(messages, first.cursor);
    expect(again.frames).toEqual([]);
    const grown = extractToolFrames([...messages, result('c1', 'sunny')], again.cursor);
    expect(grown.frames).toEqual([{ toolCallId: 'c1', name: 'weather', phase: 'completed', result: 'sunny' }]);
    expect(extractToolFrames([...messages, result('c1', 'sunny')], grown.cursor).frames).toEqual([]);
  });

  it('pairs the results of settled calls but gives them no frame, unless the call started in the same read', () => {
    const messages: BaseMessage[] = [new HumanMessage('hi'), ai([{ id: 'c1', name: 'weather' }, { id: 'c2', name: 'weather' }])];
    const first = extractToolFrames(messages, cursorAt(1));
    const settled = (id: string): boolean => id === 'c1';
    const grown = [...messages, result('c1', '{"a":1}'), result('c2', 'rain')];
    const second = extractToolFrames(grown, first.cursor, settled);
    expect(second.frames).toEqual([{ toolCallId: 'c2', name: 'weather', phase: 'completed', result: 'rain' }]);
    expect(second.cursor.pending).toEqual([]);
    // A model that reuses the id c1 for a new call: that call's result is a new one.
    const reused = [...grown, ai([{ id: 'c1', name: 'weather' }]), result('c1', 'again')];
    expect(extractToolFrames(reused, second.cursor, settled).frames).toEqual([
      { toolCallId: 'c1', name: 'weather', phase: 'started', args: {} },
      { toolCallId: 'c1', name: 'weather', phase: 'completed', result: 'again' },
    ]);
  });

  it('is pure: the cursor it is given is left as it was', () => {
    const cursor: FrameCursor = Object.freeze({ next: 0, pending: Object.freeze([]) });
    const messages = [ai([{ id: 'c1', name: 'weather' }])];
    const out = extractToolFrames(messages, cursor);
    expect(cursor).toEqual({ next: 0, pending: [] });
    expect(out.cursor.pending).toEqual([{ toolCallId: 'c1', name: 'weather', anonymous: false }]);
    expect(extractToolFrames(messages, cursor)).toEqual(out);
  });

  it('skips history before the cursor', () => {
    const history = [new HumanMessage('old'), ai([{ id: 'old1', name: 'weather' }]), result('old1', 'x'), new AIMessage('old answer')];
    const { frames } = extractToolFrames([...history, new HumanMessage('new')], cursorAt(history.length));
    expect(frames).toEqual([]);
  });

  it('pairs results without ids with the calls without ids, in order', () => {
    const messages = [
      ai([
        { name: 'slow_task', args: { ms: 500 } },
        { id: '', name: 'slow_task', args: { ms: 50 } },
      ]),
      new ToolMessage({ tool_call_id: '', name: 'slow_task', content: 'first' }),
      new ToolMessage({ tool_call_id: '', name: 'slow_task', content: 'second' }),
    ];
    const { frames } = extractToolFrames(messages);
    const [a, b] = [fallbackToolCallId(0, 0), fallbackToolCallId(0, 1)];
    expect(frames).toEqual([
      { toolCallId: a, name: 'slow_task', phase: 'started', args: { ms: 500 } },
      { toolCallId: b, name: 'slow_task', phase: 'started', args: { ms: 50 } },
      { toolCallId: a, name: 'slow_task', phase: 'completed', result: 'first' },
      { toolCallId: b, name: 'slow_task', phase: 'completed', result: 'second' },
    ]);
  });

  it('reads 10,000 messages arriving step by step once each', () => {
    // A run of 5,000 tool calls: each step appends an AI message or its tool result, and each
    // state snapshot is a new array, as `streamMode: "values"` yields it.
    const all: BaseMessage[] = [new HumanMessage('go')];
    for (let i = 0; i < 5000; i++) {
      all.push(ai([{ id: `c${i}`, name: 'calculator', args: { expression: `${i}+1` } }]));
      all.push(result(`c${i}`, `{"value":${i + 1}}`, 'success', 'calculator'));
    }
    expect(all.length - 1).toBe(10_000);
    const reads = new Array<number>(all.length).fill(0);
    const snapshot = (length: number): BaseMessage[] =>
      new Proxy(all.slice(0, length), {
        get(target, key, receiver) {
          if (typeof key === 'string' && /^\d+$/.test(key)) reads[Number(key)]++;
          return Reflect.get(target, key, receiver);
        },
      });
    let cursor = cursorAt(1);
    let frames = 0;
    for (let length = 2; length <= all.length; length++) {
      const out = extractToolFrames(snapshot(length), cursor);
      cursor = out.cursor;
      frames += out.frames.length;
    }
    expect(frames).toBe(10_000);
    expect(reads[0]).toBe(0);
    expect(reads.slice(1).every((n) => n === 1)).toBe(true);
  });
});
