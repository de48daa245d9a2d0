import { TASK_ID, demoRun, events10 } from './fixtures/streams';
import { initialTimelineState, reduceTimeline, type TimelineState } from './timeline.reducer';
import { formatDuration, oneLine, timelineView } from './timeline.view';

const run = (events: unknown[]): TimelineState =>
  events.reduce<TimelineState>((s, data, i) => reduceTimeline(s, { data, eventId: String(i + 1), receivedAt: 0 }), initialTimelineState);

const T0 = Date.UTC(2026, 0, 15, 9, 0, 0, 0);

describe('timeline view', () => {
  it('formats durations for people', () => {
    expect(formatDuration(0)).toBe('0 ms');
    expect(formatDuration(35)).toBe('35 ms');
    expect(formatDuration(1420)).toBe('1.4 s');
    expect(formatDuration(125_000)).toBe('2 min 05 s');
  });

  it('summarises a value on one bounded line', () => {
    expect(oneLine({ city: 'Paris', days: [1, 2] })).toBe('{"city":"Paris","days":[1,2]}');
    expect(oneLine('a\n  b')).toBe('a b');
    expect(oneLine('x'.repeat(100), 10)).toBe('xxxxxxxxx…');
  });

  it('shows running tools with their time so far on the client clock, then marks and durations', () => {
    const events = events10();
    // The client's clock is an hour ahead of the producer's, and frames take 50 ms to arrive.
    const HOUR = 3_600_000;
    const receivedAt = (i: number): number => {
      const step = demoRun[i];
      return (step.kind === 'frame' ? Date.parse(step.frame.timestamp as string) : T0) + HOUR + 50;
    };
    const liveState = events
      .slice(0, 5)
      .reduce<TimelineState>((s, data, i) => reduceTimeline(s, { data, eventId: String(i + 1), receivedAt: receivedAt(i) }), initialTimelineState);
    const live = timelineView(liveState, T0 + HOUR + 350);
    expect(live.rows.map((r) => [r.name, r.status, r.mark, r.durationText])).toEqual([
      ['weather', 'running', '…', '200 ms'],
      ['world_clock', 'running', '…', '199 ms'],
    ]);
    expect(live.narration).toBe('checking the weather; checking the time');
    expect(live.done).toBe(false);

    const final = timelineView(run(events), T0 + 10_000);
    expect(final.rows.map((r) => [r.name, r.status, r.mark, r.durationText, r.errorText])).toEqual([
      ['weather', 'completed', '✓', '420 ms', undefined],
      ['world_clock', 'completed', '✓', '35 ms', undefined],
      ['read_doc', 'failed', '✗', '12 ms', 'unknown doc id "nope"'],
    ]);
    expect(final.rows[0].argsText).toBe('{\n  "city": "Paris"\n}');
    expect(final.rows[0].resultText).toBe('{\n  "tempC": 18,\n  "sky": "clear"\n}');
    expect(final).toMatchObject({ done: true, failed: false, taskState: 'completed', answer: 'Paris: 18 °C, clear. Tokyo: 18:00.' });
  });

  it('groups tools that ran at the same time, in timeline order', () => {
    const names = (s: TimelineState, now: number) => timelineView(s, now).groups.map((g) => g.map((r) => r.name));
    const events = events10();
    expect(names(run(events), T0)).toEqual([['weather', 'world_clock'], ['read_doc']]);
    // while the first two still run, nothing else has started
    expect(names(run(events.slice(0, 5)), T0)).toEqual([['weather', 'world_clock']]);
    const frame = (id: string, phase: 'started' | 'completed', ms: number) => ({
      artifactUpdate: {
        taskId: TASK_ID,
        artifact: {
          artifactId: `${id}-${phase}`,
          parts: [
            {
              data: { toolCallId: id, name: id, phase, timestamp: new Date(T0 + ms).toISOString() },
              metadata: { mimeType: 'application/vnd.protolabs.tool-call-v1+json' },
            },
          ],
        },
      },
    });
    const overlapping = run([
      frame('a', 'started', 0),
      frame('b', 'started', 10),
      frame('b', 'completed', 20),
      frame('c', 'started', 30), // a still runs: same group
      frame('a', 'completed', 40),
      frame('c', 'completed', 45),
      frame('d', 'started', 50), // all ended: a new group
    ]);
    expect(names(overlapping, T0 + 60)).toEqual([['a', 'b', 'c'], ['d']]);
    // A whole parallel turn within one millisecond (as on a fast machine): the frames' order
    // says a ended after b and c started, so they ran together; d started after all had ended.
    const oneMillisecond = run([
      frame('a', 'started', 0),
      frame('a', 'completed', 1),
      frame('b', 'started', 1),
      frame('c', 'started', 1),
      frame('b', 'completed', 1),
      frame('c', 'completed', 1),
      frame('d', 'started', 1),
      frame('d', 'completed', 1),
    ]);
    expect(names(oneMillisecond, T0 + 60)).toEqual([['a'], ['b', 'c'], ['d']]);
    const turn = run([
      frame('a', 'started', 0),
      frame('b', 'started', 1),
      frame('a', 'completed', 1),
      frame('b', 'completed', 1),
    ]);
    expect(names(turn, T0 + 60)).toEqual([['a', 'b']]);
    // A snapshot lists each tool's latest frame only: a, finished, and b, still running since
    // before a ended, are one turn by their timestamps although b's start comes after a's end.
    const snapshot = {
      task: {
        id: TASK_ID,
        status: { state: 'TASK_STATE_WORKING' },
        artifacts: [frame('a', 'completed', 40), frame('b', 'started', 10), frame('c', 'started', 50)].map((f) => f.artifactUpdate.artifact),
      },
    };
    expect(names(run([snapshot]), T0 + 60)).toEqual([['a', 'b', 'c']]);
    const sequential = { task: { ...snapshot.task, artifacts: [frame('a', 'completed', 40), frame('b', 'started', 45)].map((f) => f.artifactUpdate.artifact) } };
    expect(names(run([sequential]), T0 + 60)).toEqual([['a'], ['b']]);
  });

  it('fails the tools a failed task left running with its reason, stopping their clocks, and says why the task failed', () => {
    const events = events10().slice(0, 5);
    events.push({ statusUpdate: { taskId: TASK_ID, status: { state: 'TASK_STATE_FAILED', message: { parts: [{ text: 'model error' }] } } } });
    const state = run(events);
    const view = timelineView(state, T0 + 1000);
    expect(view.rows.map((r) => [r.status, r.mark, r.errorText])).toEqual([
      ['failed', '✗', 'model error'],
      ['failed', '✗', 'model error'],
    ]);
    // The clock stopped: a later render shows the same duration.
    expect(timelineView(state, T0 + 60_000).rows.map((r) => r.durationText)).toEqual(view.rows.map((r) => r.durationText));
    expect(view).toMatchObject({ failed: true, failureText: 'model error', taskState: 'failed' });
  });
});
