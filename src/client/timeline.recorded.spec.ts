/**
 * The reducer over streams recorded from the demo server with curl (A2A 1.0 `SendStreamingMessage`
 * and 0.3 `message/stream`, tool-call-v1 activated), for the question
 * "Weather in Paris, the time in Tokyo, wait 300 ms and read the doc nope": four tools in
 * parallel, read_doc failing, then the answer.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SseParser } from './sse';
import { initialTimelineState, reduceTimeline, type TimelineInput, type TimelineState } from './timeline.reducer';

function recorded(name: string): TimelineInput[] {
  const inputs: TimelineInput[] = [];
  const parser = new SseParser((m) => {
    const { result } = JSON.parse(m.data) as { result: unknown };
    inputs.push({ data: result, eventId: m.id, receivedAt: 0 });
  });
  parser.push(readFileSync(join(__dirname, 'fixtures', 'recorded', name), 'utf8'));
  parser.end();
  return inputs;
}

const run = (inputs: TimelineInput[], from: TimelineState = initialTimelineState): TimelineState => inputs.reduce(reduceTimeline, from);

const summary = (s: TimelineState) => s.tools.values().map((t) => [t.name, t.phase, t.startSeen, typeof t.durationMs]);

describe.each(['demo-1.0.sse', 'demo-0.3.sse'])('timeline over the recorded %s', (file) => {
  const inputs = recorded(file);
  const final = run(inputs);

  it('builds the four parallel tools, in order, with the failure, the narration and the answer', () => {
    expect(inputs).toHaveLength(13);
    expect(summary(final)).toEqual([
      ['weather', 'completed', true, 'number'],
      ['world_clock', 'completed', true, 'number'],
      ['slow_task', 'completed', true, 'number'],
      ['read_doc', 'failed', true, 'number'],
    ]);
    expect(final.tools.values().find((t) => t.name === 'read_doc')?.error).toMatch(/^no document named "nope"/);
    expect(final.tools.values().find((t) => t.name === 'slow_task')?.durationMs).toBeGreaterThanOrEqual(300);
    expect(final.tools.values().find((t) => t.name === 'weather')?.args).toEqual({ city: 'Paris' });
    expect(final).toMatchObject({
      taskState: 'completed',
      done: true,
      narration: 'checking the weather; checking the clock; working through a slow step; reading the docs',
      lastEventId: '13',
      problems: [],
    });
    expect(final.answer).toMatch(/^Paris: partly cloudy, 18 °C/);
  });

  it('is unchanged by every event delivered twice, and by a resume that replays an overlap', () => {
    const doubled = inputs.flatMap((i) => [i, i]);
    expect(run(doubled)).toEqual(final);
    for (let cut = 1; cut < inputs.length; cut++) {
      expect(run(inputs.slice(Math.max(0, cut - 3)), run(inputs.slice(0, cut)))).toEqual(final);
    }
  });

  it('still shows a terminal frame whose started frame never came (an unknown id)', () => {
    const withoutStart = inputs.filter((i) => !/"name":"read_doc"[^}]*"phase":"started"/.test(JSON.stringify(i.data)));
    expect(withoutStart).toHaveLength(inputs.length - 1);
    const readDoc = run(withoutStart).tools.values().find((t) => t.name === 'read_doc');
    expect(readDoc).toMatchObject({ phase: 'failed', startSeen: false, error: expect.stringMatching(/^no document named "nope"/) });
    expect(readDoc?.durationMs).toBeUndefined();
  });

  it('keeps the same entries when the frames of different tools arrive in another order', () => {
    const frames = inputs.filter((i) => JSON.stringify(i.data).includes('"tool-call"'));
    const others = inputs.filter((i) => !frames.includes(i));
    // Terminal frames first, then the started ones, newest first: each tool still ends resolved.
    const reordered = [...others.slice(0, 3), ...[...frames].reverse(), ...others.slice(3)].map((i) => ({ ...i, eventId: undefined }));
    const state = run(reordered);
    // The same entries but for where their frames came (startOrder / endOrder).
    const byId = (t: TimelineState) =>
      Object.fromEntries(t.tools.values().map(({ startOrder: _start, endOrder: _end, ...e }) => [e.toolCallId, e]));
    expect(byId(state)).toEqual(byId(final));
    const firstSeen = [...new Set(reordered.flatMap((i) => /"toolCallId":"([^"]+)"/.exec(JSON.stringify(i.data))?.[1] ?? []))];
    expect(state.tools.ids()).toEqual(firstSeen);
  });
});
