import fc from 'fast-check';
import { Role, StreamResponse, TaskState } from '@a2a-js/sdk';
import { TOOL_CALL_V1_MIME_TYPE, emitToolCall, type ToolCallArtifactData } from '../extensions/tool-call-v1';
import { CONTEXT_ID, TASK_ID, demoRun, events03, events10, type Step } from './fixtures/streams';
import {
  initialTimelineState,
  reduceTimeline,
  settleTimeline,
  type TimelineInput,
  type TimelineState,
  type ToolCallEntry,
} from './timeline.reducer';

const RECEIVED = 1_000;

/** Inputs with SSE ids 1..n, all received at the same instant (frames carry their own timestamps). */
function inputs(events: unknown[], firstId = 1): TimelineInput[] {
  return events.map((data, i) => ({ data, eventId: String(firstId + i), receivedAt: RECEIVED }));
}

const run = (list: TimelineInput[], from: TimelineState = initialTimelineState): TimelineState =>
  list.reduce(reduceTimeline, from);

const entries = (s: TimelineState): ToolCallEntry[] => s.tools.values();
/** An entry but for where its frames came among the timeline's. */
const unordered = ({ startOrder: _start, endOrder: _end, ...entry }: ToolCallEntry) => entry;

function frameEvent(frame: ToolCallArtifactData, artifactId = `a-${frame.toolCallId}-${frame.phase}`): unknown {
  return {
    artifactUpdate: {
      taskId: TASK_ID,
      artifact: {
        artifactId,
        name: 'tool-call',
        parts: [{ data: frame, metadata: { mimeType: TOOL_CALL_V1_MIME_TYPE }, mediaType: 'application/json' }],
      },
    },
  };
}

const at = (ms: number): string => new Date(Date.UTC(2026, 0, 15, 9, 0, 0, ms)).toISOString();
const T0 = Date.UTC(2026, 0, 15, 9, 0, 0, 0);

describe('timeline reducer over a recorded A2A 1.0 stream', () => {
  const final = run(inputs(events10()));

  it('keeps one entry per toolCallId, in order of first appearance, with args, result, error', () => {
    expect(final.tools.ids()).toEqual(['call_w', 'call_t', 'call_d']);
    expect(entries(final)).toEqual([
      {
        toolCallId: 'call_w',
        name: 'weather',
        phase: 'completed',
        args: { city: 'Paris' },
        result: { tempC: 18, sky: 'clear' },
        startSeen: true,
        startedAt: T0 + 100,
        endedAt: T0 + 520,
        startOrder: 0,
        endOrder: 3,
        durationMs: 420,
      },
      {
        toolCallId: 'call_t',
        name: 'world_clock',
        phase: 'completed',
        args: { timeZone: 'Asia/Tokyo' },
        result: { time: '18:00' },
        startSeen: true,
        startedAt: T0 + 101,
        endedAt: T0 + 136,
        startOrder: 1,
        endOrder: 2,
        durationMs: 35,
      },
      {
        toolCallId: 'call_d',
        name: 'read_doc',
        phase: 'failed',
        args: { id: 'nope' },
        error: 'unknown doc id "nope"',
        startSeen: true,
        startedAt: T0 + 600,
        endedAt: T0 + 612,
        startOrder: 4,
        endOrder: 5,
        durationMs: 12,
      },
    ]);
  });

  it('keeps task ids, the last narration line, the appended answer and the terminal state', () => {
    expect(final).toMatchObject({
      taskId: TASK_ID,
      contextId: CONTEXT_ID,
      taskState: 'completed',
      done: true,
      narration: 'reading a document',
      answer: 'Paris: 18 °C, clear. Tokyo: 18:00.',
      lastEventId: String(demoRun.length),
      problems: [],
    });
  });

  it('shows each step live: running spinners before their terminal frames', () => {
    const afterStarts = run(inputs(events10()).slice(0, 5));
    expect(entries(afterStarts).map((e) => e.phase)).toEqual(['running', 'running']);
    expect(afterStarts.narration).toBe('checking the weather; checking the time');
    expect(afterStarts.taskState).toBe('working');
    expect(afterStarts.done).toBe(false);
    const fastDone = run(inputs(events10()).slice(5, 6), afterStarts);
    expect(entries(fastDone).map((e) => e.phase)).toEqual(['running', 'completed']);
    expect(fastDone.tools.get('call_w')).toBe(afterStarts.tools.get('call_w'));
  });

  it('reads the SDK in-memory StreamResponse once turned into JSON by the SDK codec', () => {
    const inMemory = events10().map((e) => StreamResponse.fromJSON(e));
    const viaCodec = run(inMemory.map((e, i) => ({ data: StreamResponse.toJSON(e), eventId: String(i + 1), receivedAt: RECEIVED })));
    expect(viaCodec).toEqual(final);
  });
});

describe('timeline reducer over a recorded A2A 0.3 stream', () => {
  it('builds the same timeline as the 1.0 stream', () => {
    const v10 = run(inputs(events10()));
    const v03 = run(inputs(events03()));
    expect(entries(v03)).toEqual(entries(v10));
    expect(v03).toMatchObject({
      taskId: TASK_ID,
      taskState: 'completed',
      done: true,
      narration: v10.narration,
      answer: v10.answer,
      problems: [],
    });
  });
});

describe('idempotence', () => {
  it('replaying any event with the same SSE id returns the very same state', () => {
    const list = inputs(events10());
    let state = initialTimelineState;
    for (const input of list) {
      state = reduceTimeline(state, input);
      expect(reduceTimeline(state, input)).toBe(state);
      // an older event replayed after a newer one changes nothing either
      expect(reduceTimeline(state, list[0])).toBe(state);
    }
  });

  it('replaying frames without SSE ids (e.g. from another client) changes nothing', () => {
    const noIds = events10().map((data) => ({ data, receivedAt: RECEIVED }));
    const once = run(noIds);
    const frameEvents = noIds.filter((_, i) => demoRun[i].kind === 'frame' || demoRun[i].kind === 'status');
    expect(run(frameEvents, once)).toBe(once);
  });

  it('a duplicated frame in another artifact (new SSE id) changes no entry', () => {
    const started = { toolCallId: 'c1', name: 'weather', phase: 'started' as const, args: { city: 'Oslo' }, timestamp: at(5) };
    const once = run([{ data: frameEvent(started, 'x1'), eventId: '1', receivedAt: 10 }]);
    const twice = run([{ data: frameEvent(started, 'x2'), eventId: '2', receivedAt: 99 }], once);
    expect(twice.tools).toBe(once.tools);
    expect(twice.lastEventId).toBe('2');
  });

  it('dedupes non-numeric SSE ids by identity', () => {
    const e = { data: frameEvent({ toolCallId: 'c', name: 'n', phase: 'started' }), eventId: 'ev-a', receivedAt: 1 };
    const once = run([e]);
    expect(reduceTimeline(once, e)).toBe(once);
    expect(once.lastEventId).toBe('ev-a');
  });
});

describe('reorderings across tools', () => {
  type Lifecycle = { id: string; frames: ToolCallArtifactData[] };
  const lifecycles: Lifecycle[] = ['a', 'b', 'c', 'd'].map((id, i) => ({
    id,
    frames: [
      { toolCallId: id, name: `tool_${id}`, phase: 'started', args: { i }, timestamp: at(10 * i) },
      i % 2 === 0
        ? { toolCallId: id, name: `tool_${id}`, phase: 'completed', result: i, timestamp: at(10 * i + 100 + i) }
        : { toolCallId: id, name: `tool_${id}`, phase: 'failed', error: `e${i}`, timestamp: at(10 * i + 50) },
    ],
  }));

  /** Every interleaving that keeps each tool's own started → terminal order. */
  const interleaving = fc
    .array(fc.integer({ min: 0, max: lifecycles.length - 1 }), { minLength: 8, maxLength: 8 })
    .filter((picks) => lifecycles.every((_, t) => picks.filter((p) => p === t).length === 2));

  it('gives the same entries whatever the interleaving, ordered by first appearance', () => {
    const reference = new Map(
      entries(run(lifecycles.flatMap((l) => l.frames).map((f) => ({ data: frameEvent(f), receivedAt: 1 })))).map((e) => [
        e.toolCallId,
        e,
      ]),
    );
    fc.assert(
      fc.property(interleaving, (picks) => {
        const next = lifecycles.map(() => 0);
        const frames = picks.map((t) => lifecycles[t].frames[next[t]++]);
        const state = run(frames.map((f, i) => ({ data: frameEvent(f), eventId: String(i + 1), receivedAt: 1 })));
        const firstSeen = [...new Set(frames.map((f) => f.toolCallId))];
        expect(state.tools.ids()).toEqual(firstSeen);
        // The same but for where each frame came (startOrder / endOrder follow the interleaving).
        for (const e of entries(state)) expect(unordered(e)).toEqual(unordered(reference.get(e.toolCallId) as ToolCallEntry));
        const order = entries(state).flatMap((e) => [[e.toolCallId, 'started', e.startOrder], [e.toolCallId, 'ended', e.endOrder]]);
        const seen = picks.map((t, i) => [lifecycles[t].frames[0].toolCallId, picks.indexOf(t) === i ? 'started' : 'ended', i]);
        expect(order.sort((x, y) => Number(x[2]) - Number(y[2]))).toEqual(seen);
        expect(state.problems).toEqual([]);
      }),
    );
  });

  it('a terminal frame before its own started frame: shown at once, completed by the late start', () => {
    const done = run([{ data: frameEvent(lifecycles[0].frames[1]), eventId: '1', receivedAt: 1 }]);
    expect(entries(done)).toEqual([
      { toolCallId: 'a', name: 'tool_a', phase: 'completed', result: 0, startSeen: false, endedAt: T0 + 100, endOrder: 0 },
    ]);
    const late = run([{ data: frameEvent(lifecycles[0].frames[0]), eventId: '2', receivedAt: 2 }], done);
    expect(entries(late)[0]).toMatchObject({ phase: 'completed', args: { i: 0 }, startSeen: true, durationMs: 100 });
  });
});

describe('unknown ids and bad input', () => {
  it('a terminal frame for an id never started still shows, without a duration', () => {
    const state = run([
      { data: frameEvent({ toolCallId: 'ghost', name: 'slow_task', phase: 'failed', error: 'cancelled' }), receivedAt: 5 },
    ]);
    expect(entries(state)).toEqual([
      { toolCallId: 'ghost', name: 'slow_task', phase: 'failed', error: 'cancelled', startSeen: false, endedAt: 5, endOrder: 0 },
    ]);
  });

  it('uses receipt time when a frame has no timestamp, its own timestamp otherwise', () => {
    const s = run([
      { data: frameEvent({ toolCallId: 'r', name: 'n', phase: 'started' }), receivedAt: 1000 },
      { data: frameEvent({ toolCallId: 'r', name: 'n', phase: 'completed' }), receivedAt: 1250 },
      { data: frameEvent({ toolCallId: 's', name: 'n', phase: 'started', timestamp: at(0) }), receivedAt: 9e12 },
      { data: frameEvent({ toolCallId: 's', name: 'n', phase: 'completed', timestamp: at(40) }), receivedAt: 1 },
    ]);
    expect(s.tools.get('r')?.durationMs).toBe(250);
    expect(s.tools.get('s')?.durationMs).toBe(40);
  });

  it('records, never throws on, unreadable events, invalid frames, bad timestamps and conflicts', () => {
    const state = run([
      { data: 'garbage', receivedAt: 1 },
      { data: { statusUpdate: { taskId: TASK_ID, status: { state: 'TASK_STATE_DANCING' } } }, receivedAt: 1 },
      { data: frameEvent({ toolCallId: 'x', name: 'n', phase: 'bogus' } as unknown as ToolCallArtifactData, 'bad'), receivedAt: 1 },
      { data: frameEvent({ toolCallId: 'y', name: 'n', phase: 'started', timestamp: 'yesterday' }), receivedAt: 7 },
      { data: frameEvent({ toolCallId: 'y', name: 'n', phase: 'completed' }), receivedAt: 9 },
      { data: frameEvent({ toolCallId: 'y', name: 'n', phase: 'failed', error: 'late' }), receivedAt: 9 },
    ]);
    expect(state.problems).toEqual([
      'unreadable stream event: stream event is not a JSON object',
      'unreadable stream event: status update: unknown task state "TASK_STATE_DANCING"',
      'artifact bad: invalid tool-call-v1 frame: phase must be one of started, completed, failed; got "bogus"',
      'tool call y: timestamp "yesterday" is not a date; used receipt time',
      'tool call y: ignored a failed frame after it had completed',
    ]);
    expect(entries(state)).toEqual([
      { toolCallId: 'y', name: 'n', phase: 'completed', startSeen: true, startedAt: 7, endedAt: 9, startOrder: 0, endOrder: 1, durationMs: 2 },
    ]);
  });

  it('ignores events of another task', () => {
    const s = run(inputs(events10()).slice(0, 2));
    const foreign = frameEvent({ toolCallId: 'z', name: 'n', phase: 'started' }) as { artifactUpdate: { taskId: string } };
    foreign.artifactUpdate.taskId = 'task-2';
    const after = reduceTimeline(s, { data: foreign, receivedAt: 1 });
    expect(after.tools.size).toBe(0);
    expect(after.problems).toEqual(['ignored an event of task task-2: this timeline follows task task-1']);
  });
});

describe('task states and answers', () => {
  const status = (state: string, text?: string) => ({
    statusUpdate: {
      taskId: TASK_ID,
      status: { state, ...(text ? { message: { role: 'ROLE_AGENT', parts: [{ text }] } } : {}) },
    },
  });

  it('a failed task keeps its reason apart from the narration', () => {
    const s = run([
      { data: status('TASK_STATE_WORKING', 'thinking'), receivedAt: 1 },
      { data: status('TASK_STATE_FAILED', 'model unavailable'), receivedAt: 2 },
    ]);
    expect(s).toMatchObject({ taskState: 'failed', done: true, narration: 'thinking', statusText: 'model unavailable' });
    expect(s.answer).toBeUndefined();
  });

  it('takes the answer from the completed status message when no answer artifact came', () => {
    const s = run([{ data: status('TASK_STATE_COMPLETED', 'It is 18 °C.'), receivedAt: 1 }]);
    expect(s.answer).toBe('It is 18 °C.');
  });

  it('a terminal task does not go back to working on a late status', () => {
    const done = run([{ data: status('TASK_STATE_CANCELED'), receivedAt: 1 }]);
    expect(reduceTimeline(done, { data: status('TASK_STATE_WORKING', 'thinking'), receivedAt: 2 })).toBe(done);
  });

  it('input-required settles the stream without ending the task', () => {
    const s = run([{ data: status('TASK_STATE_INPUT_REQUIRED', 'Which city?'), receivedAt: 1 }]);
    expect(s).toMatchObject({ taskState: 'input-required', done: true, statusText: 'Which city?' });
  });

  it('a direct Message reply is the answer', () => {
    const reply = StreamResponse.toJSON({
      payload: {
        $case: 'message',
        value: {
          messageId: 'm',
          contextId: '',
          taskId: '',
          role: Role.ROLE_AGENT,
          parts: [{ content: { $case: 'text', value: 'Hello.' }, metadata: undefined, filename: '', mediaType: '' }],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        },
      },
    });
    expect(run([{ data: reply, receivedAt: 1 }])).toMatchObject({ answer: 'Hello.', done: true });
  });
});

describe('resume', () => {
  const all = inputs(events10());

  it('a dropped stream resumed with Last-Event-ID (replay after the last id) gives the uninterrupted result', () => {
    const uninterrupted = run(all);
    for (let cut = 1; cut < all.length; cut++) {
      const beforeDrop = run(all.slice(0, cut));
      // The server replays after the client's Last-Event-ID; an overlapping replay is harmless too.
      const resumed = run(all.slice(cut - 1), beforeDrop);
      expect(resumed).toEqual(uninterrupted);
    }
  });

  it('a SubscribeToTask snapshot (Task with the artifacts so far) changes no tool already known', () => {
    const cut = 7;
    const beforeDrop = run(all.slice(0, cut));
    const artifacts = (events10().slice(0, cut) as Array<{ artifactUpdate?: { artifact: unknown } }>)
      .filter((e) => e.artifactUpdate)
      .map((e) => e.artifactUpdate?.artifact);
    const snapshot = {
      task: { id: TASK_ID, contextId: CONTEXT_ID, status: { state: 'TASK_STATE_WORKING' }, artifacts },
    };
    const afterSnapshot = reduceTimeline(beforeDrop, { data: snapshot, receivedAt: 5_000 });
    expect(afterSnapshot).toBe(beforeDrop);
    expect(run(all.slice(cut), afterSnapshot)).toEqual(run(all));
  });

  it('a snapshot alone rebuilds the timeline of a task that ended while the client was away', () => {
    const steps: Step[] = demoRun.filter((s) => s.kind === 'frame');
    const artifacts = (events10(steps) as Array<{ artifactUpdate: { artifact: unknown } }>).map((e) => e.artifactUpdate.artifact);
    const state = reduceTimeline(initialTimelineState, {
      data: { task: { id: TASK_ID, status: { state: 'TASK_STATE_COMPLETED' }, artifacts } },
      receivedAt: 1,
    });
    expect(entries(state).map((e) => [e.toolCallId, e.phase, e.durationMs])).toEqual([
      ['call_w', 'completed', 420],
      ['call_t', 'completed', 35],
      ['call_d', 'failed', 12],
    ]);
    expect(state.done).toBe(true);
  });
});

it('the in-memory SDK Part emitted by the contract is read too (task snapshot built in memory)', () => {
  const frame: ToolCallArtifactData = { toolCallId: 'm1', name: 'calculator', phase: 'failed', error: 'division by zero' };
  const snapshot = {
    task: {
      id: TASK_ID,
      status: { state: TaskState[TaskState.TASK_STATE_WORKING] },
      artifacts: [{ artifactId: 'a', parts: [emitToolCall(frame)] }],
    },
  };
  expect(entries(reduceTimeline(initialTimelineState, { data: snapshot, receivedAt: 3 }))).toEqual([
    { ...frame, phase: 'failed', startSeen: false, endedAt: 3, endOrder: 0 },
  ]);
});

describe('the streamed answer and tasks that end with tools still running', () => {
  const piece = (text: string, append: boolean, lastChunk = false): unknown => ({
    artifactUpdate: { taskId: TASK_ID, artifact: { artifactId: 'answer', name: 'answer', parts: [{ text }] }, append, lastChunk },
  });
  const started = (toolCallId: string): unknown => frameEvent({ toolCallId, name: 'slow', phase: 'started', timestamp: at(100) });

  it('grows the answer piece by piece, and an empty piece that does not append withdraws it', () => {
    const states: TimelineState[] = [];
    let state = initialTimelineState;
    for (const input of inputs([piece('Let me ', false), piece('check.', true), piece('', false), piece('It is ', false), piece('sunny.', true, true)])) {
      state = reduceTimeline(state, input);
      states.push(state);
    }
    expect(states.map((s) => s.answer)).toEqual(['Let me ', 'Let me check.', undefined, 'It is ', 'It is sunny.']);
  });

  it('fails every running tool with the reason when the task is canceled, and says so once', () => {
    const state = run(inputs([started('a'), started('b'), { statusUpdate: { taskId: TASK_ID, status: { state: 'TASK_STATE_CANCELED', message: { parts: [{ text: 'stopped by the user' }] } } } }]));
    expect(entries(state).map((e) => [e.toolCallId, e.phase, e.error])).toEqual([
      ['a', 'failed', 'stopped by the user'],
      ['b', 'failed', 'stopped by the user'],
    ]);
    expect(state.done).toBe(true);
    expect(entries(state).every((e) => e.endedAt !== undefined && e.durationMs !== undefined)).toBe(true);
  });

  it('settles on the client\'s word (not found after a restart, connection given up), once', () => {
    const running = run(inputs([started('a')]));
    // The client's clock: the frame came at RECEIVED, 4.9 s before the client gave up.
    const settled = settleTimeline(running, 'SubscribeToTask failed: task not found', RECEIVED + 4900);
    expect(entries(settled)).toMatchObject([{ phase: 'failed', error: 'SubscribeToTask failed: task not found', durationMs: 4900 }]);
    expect(settled.done).toBe(true);
    expect(settleTimeline(settled, 'again', RECEIVED + 9000)).toBe(settled);
  });
});
