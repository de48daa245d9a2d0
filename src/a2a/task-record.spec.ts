import { Artifact, StreamResponse, TaskState, Role, type Message } from '@a2a-js/sdk';
import { parseToolCall, TOOL_CALL_V1_MIME_TYPE } from '../extensions';
import { OpenTaskEventBlock, TaskEventBlock, ToolFrameEvent, sseMessageFraming, type TaskEvent } from './task-event';
import fc from 'fast-check';
import { TaskRecord, toolArtifact, type TaskListener } from './task-record';
import type { ToolCallArtifactData } from '../extensions';

function userMessage(text = 'hello'): Message {
  return {
    messageId: 'm1',
    contextId: 'c1',
    taskId: 't1',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

const FRAMINGS = [sseMessageFraming('\ndata: ', '\n\n'), sseMessageFraming('\ndata: {"jsonrpc":"2.0","id":1,"result":', '}\n\n')];

/** What a reader can tell of an event: its number, flags, weight, JSON and SSE messages (both versions, both framings). */
function readable(event: TaskEvent | undefined): unknown {
  if (!event) return undefined;
  const tool = event instanceof ToolFrameEvent ? [event.idPart, event.frameJson, event.lastChunk, event.artifactJsonBytes] : [];
  const messages = FRAMINGS.flatMap((framing) => [event.sseMessage('1.0', framing), event.sseMessage('0.3', framing)]);
  return [event.seq, event.isToolFrame, event.terminal, event.weight, event.jsonBytes, event.json, ...tool, ...messages];
}

/** How many of the logged events the task's log reads back as they were logged. */
function readBackAsLogged(task: TaskRecord, logged: TaskEvent[]): number {
  return logged.filter((event) => JSON.stringify(readable(task.log.get(event.seq))) === JSON.stringify(readable(event))).length;
}

/** The log's blocks (what it keeps of the events older than its hot ones). */
function blocksOf(task: TaskRecord): unknown[] {
  return (task.log as unknown as { blocks: unknown[] }).blocks.filter((block) => block !== undefined);
}

function newTask(maxEvents = 100, maxFinishedTools = 100): TaskRecord {
  return new TaskRecord({ id: 't1', contextId: 'c1', owner: undefined, message: userMessage(), text: 'hello', maxEvents, maxFinishedTools });
}

function collector(cursor = 0): TaskListener & { events: TaskEvent[] } {
  const events: TaskEvent[] = [];
  return {
    cursor,
    events,
    push: (e) => events.push(e),
    overrun: () => {
      throw new Error('unexpected overrun');
    },
  };
}

const kinds = (events: TaskEvent[]): (string | undefined)[] => events.map((e) => e.response.payload?.$case);

describe('TaskRecord', () => {
  it('replays from its log exactly the JSON it delivered live', () => {
    const task = newTask(1_000);
    const live = new Map<number, string>();
    task.follow({ cursor: 1, push: (e) => live.set(e.seq, e.json), overrun: () => undefined });
    for (let i = 0; i < 400; i++) {
      task.toolFrame({ toolCallId: `c${i}`, name: 'n', phase: 'started', args: { i, text: 'ünïcødé ✓ \u2028' } });
      task.toolFrame({ toolCallId: `c${i}`, name: 'n', phase: 'completed', result: { i } });
    }
    expect(live.size).toBe(800);
    const check = (): void => {
      for (const [seq, json] of live) {
        const logged = task.log.get(seq);
        expect(logged?.json).toBe(json);
        expect(logged?.seq).toBe(seq);
      }
    };
    const retainedBytes = (): number => {
      let sum = 0;
      for (let seq = task.log.firstSeq; seq <= task.lastSeq; seq++) sum += task.log.get(seq)?.json.length ?? 0;
      return sum;
    };
    check();
    expect(task.log.bytes).toBe(retainedBytes());
    expect(task.log.get(2)?.response.payload?.$case).toBe('artifactUpdate');
    // Finished, the task keeps its events packed: they read back the same, flags and weights included.
    task.complete('done');
    check();
    expect(task.log.bytes).toBe(retainedBytes());
    const flags = (seq: number): [boolean, boolean] => [task.log.get(seq)?.isToolFrame ?? false, task.log.get(seq)?.terminal ?? false];
    expect(flags(2)).toEqual([true, false]);
    expect(flags(task.lastSeq - 1)).toEqual([false, false]);
    expect(flags(task.lastSeq)).toEqual([false, true]);
    expect(task.log.get(task.lastSeq)?.jsonFor('0.3')).toContain('"final":true');
  });

  it('is followed and held again after its last follower and hold left (each starts where it says)', () => {
    const task = newTask(4);
    const first = collector(0);
    const stop = task.follow(first);
    const release = task.hold(task.lastSeq);
    task.narrate('one');
    stop();
    release();
    expect(task.listenerCount).toBe(0);
    expect(first.events.map((e) => e.seq)).toEqual([1, 2]);
    // A hold taken again keeps what comes after it past the capacity of 4.
    const releaseAgain = task.hold(task.lastSeq);
    for (let i = 0; i < 6; i++) task.narrate(`more ${i}`);
    const second = collector(2);
    const stopAgain = task.follow(second);
    expect(task.listenerCount).toBe(1);
    task.complete('done');
    expect(second.events.map((e) => e.seq)).toEqual([3, 4, 5, 6, 7, 8, 9, 10]);
    stopAgain();
    releaseAgain();
    expect(task.listenerCount).toBe(0);
    // Once released, the log is back to its capacity.
    expect(task.log.size).toBe(4);
    const late = collector(task.lastSeq - 2);
    task.follow(late);
    expect(late.events.map((e) => e.seq)).toEqual([9, 10]);
    // Its messages' and answer's empty lists serialise as empty lists.
    const snapshot = task.snapshot();
    expect(snapshot.history[1]).toMatchObject({ extensions: [], referenceTaskIds: [] });
    expect(snapshot.artifacts[0].extensions).toEqual([]);
  });

  it('replays blocks of ASCII events and blocks holding other text exactly as delivered', () => {
    const task = newTask(10_000);
    const live = new Map<number, string>();
    task.follow({ cursor: 1, push: (e) => live.set(e.seq, e.json), overrun: () => undefined });
    for (let i = 0; i < 3_000; i++) {
      // One stretch of frames with characters past ASCII (one block holds them), the rest plain.
      const text = i >= 1_500 && i < 1_510 ? 'ünïcødé ✓ \u2028 \ud83d\ude00' : 'plain';
      task.toolFrame({ toolCallId: `c${i}`, name: 'n', phase: 'started', args: { i, text } });
      task.toolFrame({ toolCallId: `c${i}`, name: 'n', phase: 'completed', result: { i, text } });
      if (i === 1_000) task.narrate('half way: ✓');
    }
    task.complete('done ✓');
    expect(live.size).toBe(task.lastSeq - 1);
    for (const [seq, json] of live) expect(task.log.get(seq)?.json).toBe(json);
  });

  it('packs its log when it settles, unless its store forgets it then (packWhenSettled: false): its events stay as they were logged', () => {
    const make = (packWhenSettled?: boolean): { task: TaskRecord; logged: TaskEvent[] } => {
      const logged: TaskEvent[] = [];
      const task = new TaskRecord({
        id: 't1',
        contextId: 'c1',
        owner: undefined,
        message: userMessage(),
        text: 'hello',
        maxEvents: 1_000,
        maxFinishedTools: 100,
        onEvent: (event) => logged.push(event),
        packWhenSettled,
      });
      for (let i = 0; i < 100; i++) {
        task.toolFrame({ toolCallId: `c${i}`, name: 'n', phase: 'started', args: { i } });
        task.toolFrame({ toolCallId: `c${i}`, name: 'n', phase: 'completed', result: { i } });
      }
      task.complete('done');
      return { task, logged };
    };
    // Not packed: its events past the hot ones are in one open block, which holds their strings as they were logged.
    const kept = make(false);
    expect(readBackAsLogged(kept.task, kept.logged)).toBe(kept.logged.length);
    expect(blocksOf(kept.task).map((block) => block instanceof OpenTaskEventBlock)).toEqual([true]);
    // Packed: one closed block (one string), read back as fresh objects of the same JSON.
    const packed = make();
    expect(readBackAsLogged(packed.task, packed.logged)).toBe(packed.logged.length);
    expect(blocksOf(packed.task).map((block) => block instanceof TaskEventBlock)).toEqual([true]);
    expect(packed.logged.map((event) => packed.task.log.get(event.seq)?.json)).toEqual(packed.logged.map((event) => event.json));
  });

  describe('kept when settled (keptWhenSettled, as the in-memory store keeps its tasks)', () => {
    const message = userMessage('ünïcødé ✓ \u2028');
    const make = (keptWhenSettled: boolean, tools = 0, maxEvents = 1_000): { task: TaskRecord; logged: TaskEvent[] } => {
      const logged: TaskEvent[] = [];
      const task = new TaskRecord({
        id: 't1',
        contextId: 'c1',
        owner: undefined,
        message,
        text: 'hello',
        maxEvents,
        maxFinishedTools: 100,
        onEvent: (event) => logged.push(event),
        packWhenSettled: false,
        keptWhenSettled,
      });
      for (let i = 0; i < tools; i++) task.toolFrame({ toolCallId: `c${i}`, name: 'n', phase: 'completed', result: { i } });
      return { task, logged };
    };
    const endings: [string, (task: TaskRecord) => void][] = [
      ['completed', (task) => task.complete('done')],
      ['completed after streamed pieces', (task) => (task.narrate('thinking'), task.answer('do', false, false), task.answer('ne', true, true), task.complete('done'))],
      ['completed with other text than streamed', (task) => (task.answer('draft', false, false), task.complete('final'))],
      ['failed', (task) => task.fail('boom')],
      ['cancelled', (task) => (task.answer('partial', false, false), task.cancel('stop'))],
    ];
    const views = (task: TaskRecord): unknown[] =>
      [undefined, { historyLength: 0 }, { historyLength: 1 }, { historyLength: 5 }, { includeArtifacts: false }].map((options) => task.snapshot(options));

    beforeEach(() => jest.useFakeTimers({ now: Date.parse('2026-12-04T12:00:00Z') }));
    afterEach(() => jest.useRealTimers());

    it.each(endings)('a task without tools, %s: compacted, it reads as it would uncompacted (snapshots, every event)', (_, end) => {
      const compact = make(true);
      const plain = make(false);
      end(compact.task);
      end(plain.task);
      expect(views(compact.task)).toEqual(views(plain.task));
      expect(compact.task.snapshotArtifacts()).toEqual(plain.task.snapshotArtifacts());
      expect(compact.task.state).toBe(plain.task.state);
      const json = (task: TaskRecord): (string | undefined)[] => Array.from({ length: task.lastSeq }, (_, i) => task.log.get(i + 1)?.json);
      expect(json(compact.task)).toEqual(json(plain.task));
      expect(json(compact.task)).toEqual(compact.logged.map((event) => event.json));
      expect(compact.task.log.get(compact.task.lastSeq)?.terminal).toBe(true);
      expect(compact.task.bytes).toBe(plain.task.bytes);
      // Compacted: its events read back as they were logged, the user's message is read from its Task event.
      expect(readBackAsLogged(compact.task, compact.logged)).toBe(compact.logged.length);
      expect(readBackAsLogged(plain.task, plain.logged)).toBe(plain.logged.length);
      // No event is kept as an object: all are in one open block once the task had more than its hot ones, else as logged.
      if (compact.logged.length > 4) expect(blocksOf(compact.task).map((block) => block instanceof OpenTaskEventBlock)).toEqual([true]);
      else expect(compact.logged.filter((event) => compact.task.log.get(event.seq) === event)).toHaveLength(compact.logged.length);
      expect(compact.task.snapshot().history[0]).not.toBe(message);
      expect(plain.task.snapshot().history[0]).toBe(message);
    });

    it('keeps its messages when a hold kept its log past its capacity (a trim could drop the Task event later)', () => {
      const compact = make(true, 0, 2);
      const plain = make(false, 0, 2);
      const releases = [compact, plain].map(({ task }) => task.hold(0));
      for (const { task } of [compact, plain]) {
        task.narrate('thinking');
        task.complete('done');
      }
      releases.forEach((release) => release());
      expect(compact.task.log.firstSeq).toBeGreaterThan(1);
      expect(views(compact.task)).toEqual(views(plain.task));
      expect(compact.task.snapshot().history[0]).toBe(message);
    });

    it.each(endings)('a task with tools, %s: its events read back as logged (kept in one open block, no event object), its snapshots read as uncompacted', (_, end) => {
      const run = (task: TaskRecord): void => {
        // Tools that finish, finish again, start again and stay open (closed by the end), past maxFinishedTools (3).
        for (let i = 0; i < 6; i++) task.toolFrame({ toolCallId: `c${i}`, name: 'n', phase: 'started', args: { i } });
        task.answer('early', false, false);
        for (const i of [0, 1, 2, 0, 3, 4]) task.toolFrame({ toolCallId: `c${i}`, name: 'n', phase: 'completed', result: { i } });
        task.toolFrame({ toolCallId: 'c1', name: 'n', phase: 'started', args: { again: true } });
        end(task);
      };
      const [compact, plain] = [true, false].map((kept) => {
        const logged: TaskEvent[] = [];
        const task = new TaskRecord({ id: 't1', contextId: 'c1', owner: undefined, message, text: 'hello', maxEvents: 1_000, maxFinishedTools: 3, onEvent: (e) => logged.push(e), packWhenSettled: false, keptWhenSettled: kept });
        run(task);
        return { task, logged };
      });
      expect(readBackAsLogged(compact.task, compact.logged)).toBe(compact.logged.length);
      expect(blocksOf(compact.task).map((block) => block instanceof OpenTaskEventBlock)).toEqual([true]);
      expect(views(compact.task)).toEqual(views(plain.task));
      expect(compact.task.snapshotArtifacts()).toEqual(plain.task.snapshotArtifacts());
      expect(compact.task.snapshot().artifacts.length).toBeGreaterThan(3);
      expect(compact.task.snapshot().history[0]).not.toBe(message);
      expect(compact.task.bytes).toBe(plain.task.bytes);
    });
  });

  it('weighs its retained events exactly while blocks of them are packed and dropped', () => {
    const task = newTask(300);
    const retainedBytes = (): number => {
      let sum = 0;
      for (let seq = task.log.firstSeq; seq <= task.lastSeq; seq++) sum += task.log.get(seq)?.json.length ?? 0;
      return sum;
    };
    for (let i = 0; i < 600; i++) {
      task.toolFrame({ toolCallId: `c${i}`, name: 'n', phase: 'started', args: { text: 'x'.repeat(1_000 + (i % 7)) } });
      if (i % 50 === 0) task.narrate(`step ${i}`);
      task.toolFrame({ toolCallId: `c${i}`, name: 'n', phase: i % 3 === 0 ? 'failed' : 'completed', result: { i } });
      if (i % 100 === 99) expect(task.log.bytes).toBe(retainedBytes());
    }
    task.complete('done');
    expect(task.log.bytes).toBe(retainedBytes());
  });

  it('writes a tool frame event exactly as the SDK codec does (hand-built JSON)', () => {
    const json = fc.jsonValue({ maxDepth: 3 });
    // Tool call ids JSON writes as they are, and ones it escapes (quotes, backslashes, controls, lone surrogates).
    const toolCallId = fc.oneof(
      fc.string({ minLength: 1 }),
      fc.string({ minLength: 1, unit: 'binary' }),
      fc.constantFrom('call_1', 'a"b', 'a\\b', 'line\nbreak', '\u0000', 'x\ud800y', '\udfff', '😀', '\u2028', 'tool-call-x'),
    );
    const frame: fc.Arbitrary<ToolCallArtifactData> = fc.oneof(
      fc.record({ toolCallId: fc.string({ minLength: 1 }), name: fc.string({ minLength: 1 }), phase: fc.constant('started' as const), args: json }, { requiredKeys: ['toolCallId', 'name', 'phase'] }),
      fc.record({ toolCallId: fc.string({ minLength: 1 }), name: fc.string({ minLength: 1 }), phase: fc.constant('completed' as const), result: json, timestamp: fc.string() }, { requiredKeys: ['toolCallId', 'name', 'phase'] }),
      fc.record({ toolCallId: fc.string({ minLength: 1 }), name: fc.string({ minLength: 1 }), phase: fc.constant('failed' as const), error: fc.string() }),
    );
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), frame, toolCallId, (id, contextId, generated, callId) => {
        const f = { ...generated, toolCallId: callId };
        const task = new TaskRecord({ id, contextId, owner: undefined, message: userMessage(), text: 'hello', maxEvents: 10, maxFinishedTools: 10 });
        task.toolFrame(f);
        const codec = StreamResponse.toJSON({
          payload: { $case: 'artifactUpdate', value: { taskId: id, contextId, artifact: toolArtifact(f), append: false, lastChunk: f.phase !== 'started', metadata: undefined } },
        });
        expect(task.log.get(task.lastSeq)?.json).toBe(JSON.stringify(codec));
        // Its other readings: the SSE message, the bytes written piece by piece, its artifact's JSON (a shared store's snapshot).
        const event = task.log.get(task.lastSeq) as ToolFrameEvent;
        const json = JSON.stringify(codec);
        for (const framing of FRAMINGS) expect(event.sseMessage('1.0', framing)).toBe(`id: ${event.seq}${framing.line}${json}${framing.end}`);
        expect([event.weight, event.jsonBytes]).toEqual([json.length, Buffer.byteLength(json)]);
        const written = Buffer.alloc(event.jsonBytes);
        expect(event.writeJson(written, 0)).toBe(written.length);
        expect(written.toString()).toBe(json);
        const artifactJson = JSON.stringify(Artifact.toJSON(toolArtifact(f)));
        const artifact = Buffer.alloc(event.artifactJsonBytes);
        expect(event.writeArtifactJson(artifact, 0)).toBe(artifact.length);
        expect(artifact.toString()).toBe(artifactJson);
        // The snapshot's artifact is the frame as its JSON reads back: the same on the wire (-0 is 0 in JSON either way).
        expect(task.snapshot().artifacts.map((x) => JSON.stringify(Artifact.toJSON(x)))).toEqual([JSON.stringify(Artifact.toJSON(toolArtifact(f)))]);
        // Packed (kept as its artifact id and frame only), it reads back the same, with the same weight.
        const bytes = task.log.bytes;
        task.log.pack();
        expect(task.log.get(task.lastSeq)?.json).toBe(JSON.stringify(codec));
        expect(task.log.get(task.lastSeq)?.isToolFrame).toBe(true);
        expect(task.log.bytes).toBe(bytes);
      }),
      { numRuns: 300 },
    );
  });

  it('starts SUBMITTED with the Task as event 1', () => {
    const task = newTask();
    expect(task.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect(task.log.lastSeq).toBe(1);
    const first = task.log.get(1)!;
    expect(first.response.payload?.$case).toBe('task');
    expect(JSON.parse(first.json).task.history[0].parts[0].text).toBe('hello');
    // Exactly the Task a snapshot gives at that point, as the codec writes it.
    expect(first.json).toBe(JSON.stringify(StreamResponse.toJSON({ payload: { $case: 'task', value: task.snapshot() } })));
  });

  it('stamps each status with the time it changed, as toISOString writes it (statuses of one millisecond share the text)', () => {
    jest.useFakeTimers({ now: Date.parse('2026-12-31T23:59:59.998Z') });
    try {
      const stamps: string[] = [];
      const stamp = (task: TaskRecord): void => {
        expect(task.status.timestamp).toBe(new Date(task.statusTime).toISOString());
        stamps.push(task.status.timestamp as string);
      };
      const first = newTask();
      stamp(first);
      first.narrate('same millisecond');
      stamp(first);
      const second = newTask();
      stamp(second);
      jest.advanceTimersByTime(1);
      second.narrate('a millisecond later');
      stamp(second);
      jest.advanceTimersByTime(1);
      first.complete('into the next year');
      stamp(first);
      jest.setSystemTime(Date.parse('2026-12-31T23:59:59.998Z'));
      second.fail('the clock went back');
      stamp(second);
      expect(stamps).toEqual([
        '2026-12-31T23:59:59.998Z',
        '2026-12-31T23:59:59.998Z',
        '2026-12-31T23:59:59.998Z',
        '2026-12-31T23:59:59.999Z',
        '2027-01-01T00:00:00.000Z',
        '2026-12-31T23:59:59.998Z',
      ]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('turns narration, frames and the answer into the A2A events of the stream, in order', () => {
    const task = newTask();
    task.narrate('thinking');
    task.toolFrame({ toolCallId: 'a', name: 'weather', phase: 'started', args: { city: 'Paris' } });
    task.toolFrame({ toolCallId: 'a', name: 'weather', phase: 'completed', result: { tempC: 18 } });
    task.complete('18 °C');
    const events = [2, 3, 4, 5, 6].map((seq) => task.log.get(seq)!);
    expect(kinds(events)).toEqual(['statusUpdate', 'artifactUpdate', 'artifactUpdate', 'artifactUpdate', 'statusUpdate']);
    expect(JSON.parse(events[0].json).statusUpdate.status).toMatchObject({
      state: 'TASK_STATE_WORKING',
      message: { role: 'ROLE_AGENT', parts: [{ text: 'thinking' }] },
    });
    const frameWire = JSON.parse(events[1].json).artifactUpdate;
    expect(frameWire.artifact.name).toBe('tool-call');
    expect(frameWire.artifact.parts[0].metadata).toEqual({ mimeType: TOOL_CALL_V1_MIME_TYPE });
    expect(parseToolCall(frameWire.artifact.parts)).toEqual({ toolCallId: 'a', name: 'weather', phase: 'started', args: { city: 'Paris' } });
    expect(events[1].isToolFrame).toBe(true);
    expect(JSON.parse(events[3].json).artifactUpdate.artifact).toMatchObject({ name: 'answer', parts: [{ text: '18 °C' }] });
    expect(events[4].terminal).toBe(true);
    expect(task.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('keeps one artifact per tool call, holding its latest phase, plus the answer', () => {
    const task = newTask();
    task.toolFrame({ toolCallId: 'a', name: 'weather', phase: 'started' });
    task.toolFrame({ toolCallId: 'b', name: 'clock', phase: 'started' });
    task.toolFrame({ toolCallId: 'a', name: 'weather', phase: 'failed', error: 'down' });
    task.complete('partial');
    const snapshot = task.snapshot();
    expect(snapshot.artifacts.map((a) => a.artifactId)).toEqual(['tool-call-a', 'tool-call-b', 'answer']);
    expect(parseToolCall(snapshot.artifacts[0].parts)).toMatchObject({ phase: 'failed', error: 'down' });
    // b never finished: the answer closed it, so every started tool has a terminal frame.
    expect(parseToolCall(snapshot.artifacts[1].parts)).toMatchObject({ phase: 'failed', error: 'the run ended before this tool finished' });
    expect(snapshot.history.map((m) => m.role)).toEqual([Role.ROLE_USER, Role.ROLE_AGENT]);
  });

  it('keeps open tools plus the newest maxFinishedTools finished ones: 100,000 calls, a small snapshot', () => {
    const task = newTask(100, 50);
    task.toolFrame({ toolCallId: 'open-early', name: 'slow', phase: 'started' });
    for (let i = 0; i < 100_000; i++) {
      task.toolFrame({ toolCallId: `c${i}`, name: 'calculator', phase: 'started', args: { expression: `${i}*2` } });
      task.toolFrame({ toolCallId: `c${i}`, name: 'calculator', phase: 'completed', result: i * 2 });
    }
    task.toolFrame({ toolCallId: 'open-late', name: 'slow', phase: 'started' });
    const ids = task.snapshot().artifacts.map((a) => a.artifactId);
    expect(ids).toHaveLength(52);
    expect(ids).toContain('tool-call-open-early');
    expect(ids).toContain('tool-call-open-late');
    expect(ids.filter((id) => id.startsWith('tool-call-c'))).toEqual(Array.from({ length: 50 }, (_, k) => `tool-call-c${99_950 + k}`));
    // What GetTask or a resume from a trimmed Last-Event-ID sends stays small, however long the task.
    expect(JSON.stringify(task.snapshot()).length).toBeLessThan(64 * 1024);
    // What the task holds: its retained events (100) and kept artifacts, not 100,000 calls.
    expect(task.bytes).toBeLessThan(128 * 1024);
    task.complete('done');
    // The open tools were closed as failed and the answer added; still bounded.
    expect(task.snapshot().artifacts.map((a) => a.artifactId).slice(-1)).toEqual(['answer']);
    expect(task.snapshot().artifacts).toHaveLength(51);
  });

  it('keeps a tool that finishes again as the newest finished one, and one started again as open', () => {
    const task = newTask(100, 2);
    const ids = (): string[] => task.snapshot().artifacts.map((a) => a.artifactId);
    for (const id of ['a', 'b', 'c']) {
      task.toolFrame({ toolCallId: id, name: 'x', phase: 'started' });
      task.toolFrame({ toolCallId: id, name: 'x', phase: 'completed', result: id });
    }
    expect(ids()).toEqual(['tool-call-b', 'tool-call-c']);
    // b finishes again: c is now the oldest finished one and goes first.
    task.toolFrame({ toolCallId: 'b', name: 'x', phase: 'failed', error: 'again' });
    task.toolFrame({ toolCallId: 'd', name: 'x', phase: 'completed', result: 'd' });
    expect(ids()).toEqual(['tool-call-b', 'tool-call-d']);
    expect(parseToolCall(task.snapshot().artifacts[0].parts)).toMatchObject({ phase: 'failed', error: 'again' });
    // b starts again: open tools are kept whatever the cap, and closed when the task ends.
    task.toolFrame({ toolCallId: 'b', name: 'x', phase: 'started', args: 2 });
    for (const id of ['e', 'f', 'g']) task.toolFrame({ toolCallId: id, name: 'x', phase: 'completed', result: id });
    expect(ids()).toEqual(['tool-call-b', 'tool-call-f', 'tool-call-g']);
    expect(parseToolCall(task.snapshot().artifacts[0].parts)).toMatchObject({ phase: 'started', args: 2 });
    task.complete('done');
    // Closing b finished it last: f, the oldest finished, goes (the map keeps b's first place).
    expect(ids()).toEqual(['tool-call-b', 'tool-call-g', 'answer']);
    expect(parseToolCall(task.snapshot().artifacts[0].parts)).toMatchObject({ toolCallId: 'b', name: 'x', phase: 'failed', error: 'the run ended before this tool finished' });
  });

  it('keeps a tool whose call id is "answer" apart from the answer', () => {
    const task = newTask();
    task.toolFrame({ toolCallId: 'answer', name: 'x', phase: 'started' });
    task.answer('par', false, false);
    task.toolFrame({ toolCallId: 'answer', name: 'x', phase: 'completed', result: 1 });
    task.complete('partial');
    const artifacts = task.snapshot().artifacts;
    expect(artifacts.map((a) => a.artifactId)).toEqual(['tool-call-answer', 'answer']);
    expect(parseToolCall(artifacts[0].parts)).toMatchObject({ phase: 'completed', result: 1 });
  });

  it('stays bounded when the same tools finish over and over', () => {
    const task = newTask(100, 3);
    for (let i = 0; i < 20_000; i++) task.toolFrame({ toolCallId: `t${i % 5}`, name: 'x', phase: 'completed', result: i });
    expect(task.snapshot().artifacts.map((a) => a.artifactId)).toEqual(['tool-call-t2', 'tool-call-t3', 'tool-call-t4']);
    expect(parseToolCall(task.snapshot().artifacts[2].parts)).toMatchObject({ result: 19_999 });
    // Its finished entries hold a few stale ones at most, not one per frame.
    const { finishedHead, finishedEnd } = task as unknown as { finishedHead: number; finishedEnd: number };
    expect(finishedEnd - finishedHead).toBeLessThanOrEqual(2 * 3 + 64);
    expect(task.bytes).toBeLessThan(64 * 1024);
  });

  it('weighs its retained events and its kept tools\' latest events, whatever the tools do (also once compacted as it settles)', () => {
    const frame = fc.record({ tool: fc.integer({ min: 0, max: 5 }), phase: fc.constantFrom('started' as const, 'completed' as const, 'failed' as const), n: fc.nat(1_000) });
    fc.assert(
      fc.property(fc.array(frame, { maxLength: 60 }), fc.integer({ min: 0, max: 4 }), fc.boolean(), (frames, maxFinishedTools, kept) => {
        const task = new TaskRecord({ id: 't1', contextId: 'c1', owner: undefined, message: userMessage(), text: 'hello', maxEvents: 1_000, maxFinishedTools, keptWhenSettled: kept });
        // What the task holds: its log's weight, and the JSON of each kept tool's latest event (the events a snapshot lists).
        const expected = (): number =>
          task.log.bytes + task.snapshotArtifacts().reduce((sum, a) => sum + ('artifactId' in a ? 0 : (a as TaskEvent).json.length), 0);
        for (const { tool, phase, n } of frames) {
          const id = `t${tool}`;
          if (phase === 'started') task.toolFrame({ toolCallId: id, name: 'x', phase, args: { n } });
          else if (phase === 'completed') task.toolFrame({ toolCallId: id, name: 'x', phase, result: n });
          else task.toolFrame({ toolCallId: id, name: 'x', phase, error: `e${n}` });
          expect(task.bytes).toBe(expected());
        }
        task.complete('done');
        expect(task.bytes).toBe(expected());
      }),
      { numRuns: 200 },
    );
  });

  it('keeps the artifacts a naive model of open and newest finished tools keeps, in order, whatever the frames\' order (ids JSON escapes, ids that begin others)', () => {
    // Ids one of which begins another, and ids JSON escapes (a finished entry keeps those, and reads the others from its frame).
    const ids = ['t0', 't0x', 't1', 'q"x', 'd\\e'];
    const frame = fc.record({ tool: fc.integer({ min: 0, max: ids.length - 1 }), phase: fc.constantFrom('started' as const, 'completed' as const, 'failed' as const), n: fc.nat(1_000) });
    fc.assert(
      fc.property(fc.array(frame, { maxLength: 60 }), fc.integer({ min: 0, max: 3 }), (frames, maxFinishedTools) => {
        const task = newTask(1_000, maxFinishedTools);
        // In insertion order (a tool dropped and framed again comes last): its latest frame, and the finished ones oldest first.
        const model = new Map<string, ToolCallArtifactData>();
        let finished: string[] = [];
        for (const { tool, phase, n } of frames) {
          const id = ids[tool];
          const f: ToolCallArtifactData =
            phase === 'started' ? { toolCallId: id, name: 'x', phase, args: { n } } : phase === 'completed' ? { toolCallId: id, name: 'x', phase, result: n } : { toolCallId: id, name: 'x', phase, error: `e${n}` };
          task.toolFrame(f);
          model.set(id, f);
          finished = finished.filter((known) => known !== id);
          if (phase !== 'started') finished.push(id);
          while (finished.length > maxFinishedTools) model.delete(finished.shift() as string);
          expect(task.snapshot().artifacts.map((a) => JSON.stringify(Artifact.toJSON(a)))).toEqual([...model.values()].map((m) => JSON.stringify(Artifact.toJSON(toolArtifact(m)))));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('closes its open tools as failed in the order they first came, one open or several, whatever the frames\' order (ids JSON escapes too)', () => {
    const frame = fc.record({ tool: fc.constantFrom('a', 'q"x', 'c', 'd\\e', 'answer'), phase: fc.constantFrom('started' as const, 'completed' as const), n: fc.nat(1_000) });
    fc.assert(
      fc.property(fc.array(frame, { maxLength: 40 }), fc.integer({ min: 0, max: 3 }), fc.boolean(), (frames, maxFinishedTools, keptWhenSettled) => {
        const task = new TaskRecord({ id: 't1', contextId: 'c1', owner: undefined, message: userMessage(), text: 'hello', maxEvents: 1_000, maxFinishedTools, keptWhenSettled });
        for (const { tool, phase, n } of frames) task.toolFrame(phase === 'started' ? { toolCallId: tool, name: 'x', phase, args: { n } } : { toolCallId: tool, name: 'x', phase, result: n });
        // The open ones as the snapshot lists them (in the order they first came).
        const open = task
          .snapshot()
          .artifacts.map((a) => parseToolCall(a.parts) as ToolCallArtifactData)
          .filter((f) => f.phase === 'started')
          .map((f) => f.toolCallId);
        const before = task.lastSeq;
        task.fail('gone');
        const closed: unknown[] = [];
        for (let seq = before + 1; seq < task.lastSeq; seq++) closed.push(parseToolCall(JSON.parse(task.log.get(seq)!.json).artifactUpdate.artifact.parts));
        expect(closed).toEqual(open.map((toolCallId) => expect.objectContaining({ toolCallId, phase: 'failed', error: 'gone' })));
        // None is left open: every tool the snapshot lists has ended.
        expect(task.snapshot().artifacts.map((a) => (parseToolCall(a.parts) as ToolCallArtifactData).phase)).not.toContain('started');
      }),
      { numRuns: 300 },
    );
  });

  it('keeps a finished tool\'s id only when its frame\'s JSON does not give it back, and finds it either way', () => {
    const task = newTask(100, 10);
    // Ids made at run time, as a model's are: strings of their own, which a kept entry would keep alive.
    const plain = ['call', String(1)].join('_');
    const escaped = ['q"', 'x'].join('');
    task.toolFrame({ toolCallId: plain, name: 'x', phase: 'started' });
    task.toolFrame({ toolCallId: plain, name: 'x', phase: 'completed', result: 1 });
    task.toolFrame({ toolCallId: escaped, name: 'x', phase: 'completed', result: 2 });
    const chunk = (task as unknown as { finished: unknown[][] }).finished[0];
    // Strings other than the frames' JSON: only the id JSON escapes.
    expect(chunk.filter((slot) => typeof slot === 'string' && !slot.startsWith('{'))).toEqual([escaped]);
    // Found by id: finishing again replaces each, opening again takes it out of the finished ones.
    task.toolFrame({ toolCallId: 'call_1', name: 'x', phase: 'failed', error: 'again' });
    task.toolFrame({ toolCallId: 'q"x', name: 'x', phase: 'started' });
    expect(task.snapshot().artifacts.map((a) => parseToolCall(a.parts))).toEqual([
      expect.objectContaining({ toolCallId: 'call_1', phase: 'failed', error: 'again' }),
      expect.objectContaining({ toolCallId: 'q"x', phase: 'started' }),
    ]);
    const events = task.snapshotArtifacts() as ToolFrameEvent[];
    expect(events.map((e) => JSON.parse(e.json).artifactUpdate.artifact.artifactId)).toEqual(['tool-call-call_1', 'tool-call-q"x']);
    expect(task.bytes).toBe(task.log.bytes + events.reduce((sum, e) => sum + e.json.length, 0));
  });

  it('keeps a finished tool whose events left the log (its latest frame is kept with it)', () => {
    const task = newTask(8, 4);
    task.toolFrame({ toolCallId: 'a', name: 'x', phase: 'started' });
    task.toolFrame({ toolCallId: 'a', name: 'x', phase: 'completed', result: 'early' });
    task.toolFrame({ toolCallId: 'q"x', name: 'x', phase: 'failed', error: 'escaped' });
    for (let i = 0; i < 40; i++) task.narrate(`line ${i}`);
    expect(task.log.firstSeq).toBeGreaterThan(4);
    expect(task.snapshot().artifacts.map((a) => parseToolCall(a.parts))).toEqual([
      expect.objectContaining({ toolCallId: 'a', phase: 'completed', result: 'early' }),
      expect.objectContaining({ toolCallId: 'q"x', phase: 'failed', error: 'escaped' }),
    ]);
    // As a shared store writes them: their latest events, made again as they were logged.
    const events = task.snapshotArtifacts() as ToolFrameEvent[];
    expect(events.map((e) => [e.seq, JSON.parse(e.json).artifactUpdate.artifact.artifactId])).toEqual([
      [3, 'tool-call-a'],
      [4, 'tool-call-q"x'],
    ]);
    // Finishing again after that moves it to the newest finished one, keeping its place.
    task.toolFrame({ toolCallId: 'q"x', name: 'x', phase: 'completed', result: 'again' });
    expect(JSON.parse(task.log.get(task.lastSeq)?.json as string).artifactUpdate.artifact.artifactId).toBe('tool-call-q"x');
    expect(task.snapshot().artifacts.map((a) => parseToolCall(a.parts))).toEqual([
      expect.objectContaining({ toolCallId: 'a', result: 'early' }),
      expect.objectContaining({ toolCallId: 'q"x', result: 'again' }),
    ]);
  });

  it('does work in proportion to its frames, whatever its tools do and whatever maxFinishedTools is', () => {
    // Map operations, finished entries written and read (index probes, compactions), per frame:
    // a lookup among the kept finished tools per frame, or a compaction per stale entry, would
    // multiply them by the tools kept.
    const counted = (maxFinishedTools: number, frames: (i: number) => ToolCallArtifactData): { mapOps: number; entries: number; reads: number } => {
      const task = newTask(100, maxFinishedTools);
      const record = task as unknown as { pushFinished: (...args: unknown[]) => number; finishedChunk: (...args: unknown[]) => unknown };
      let entries = 0;
      let reads = 0;
      const push = record.pushFinished;
      record.pushFinished = function (this: unknown, ...args: unknown[]) {
        entries += 1;
        return push.apply(this, args);
      };
      const read = record.finishedChunk;
      record.finishedChunk = function (this: unknown, ...args: unknown[]) {
        reads += 1;
        return read.apply(this, args);
      };
      let mapOps = 0;
      const { get, set, delete: remove } = Map.prototype;
      Map.prototype.get = function (this: Map<unknown, unknown>, key: unknown) {
        mapOps += 1;
        return get.call(this, key);
      };
      Map.prototype.set = function (this: Map<unknown, unknown>, key: unknown, value: unknown) {
        mapOps += 1;
        return set.call(this, key, value);
      };
      Map.prototype.delete = function (this: Map<unknown, unknown>, key: unknown) {
        mapOps += 1;
        return remove.call(this, key);
      };
      const n = 20_000;
      try {
        for (let i = 0; i < n; i++) task.toolFrame(frames(i));
      } finally {
        Object.assign(Map.prototype, { get, set, delete: remove });
      }
      return { mapOps: mapOps / n, entries: entries / n, reads: reads / n };
    };
    const calls = (i: number): ToolCallArtifactData =>
      i % 2 === 0 ? { toolCallId: `c${i >> 1}`, name: 'x', phase: 'started' } : { toolCallId: `c${i >> 1}`, name: 'x', phase: 'completed', result: i };
    const refinished = (i: number): ToolCallArtifactData => ({ toolCallId: `t${i % 7}`, name: 'x', phase: 'completed', result: i });
    const reopened = (i: number): ToolCallArtifactData => ({ toolCallId: `t${(i >> 1) % 7}`, name: 'x', phase: i % 2 === 0 ? 'started' : 'failed', error: 'e' });
    // Ids whose characters differ only in their high bits (10-15): FNV-1a alone puts them all in
    // one slot of any table of up to 1,024 slots, so each new tool's lookup walked them all.
    const highBits = (k: number): string => String.fromCharCode(0x61 | ((k & 63) << 10), 0x61 | (((k >> 6) & 63) << 10), 0x61 | (((k >> 12) & 63) << 10));
    const colliding = (i: number): ToolCallArtifactData =>
      i % 2 === 0 ? { toolCallId: highBits(i >> 1), name: 'x', phase: 'started' } : { toolCallId: highBits(i >> 1), name: 'x', phase: 'completed', result: i };
    for (const max of [0, 3, 50, 100, 1_000_000]) {
      for (const frames of [calls, refinished, reopened, colliding]) {
        const { mapOps, entries, reads } = counted(max, frames);
        // One tool open at a time (calls, reopened, colliding) is kept outside the map: a set and a
        // delete per call on it (1 per frame) would fail this.
        if (frames === refinished) expect(mapOps).toBeLessThanOrEqual(4);
        else expect(mapOps).toBeLessThan(0.5);
        expect(entries).toBeLessThanOrEqual(1.5);
        expect(reads).toBeLessThanOrEqual(16);
      }
    }
  });

  it('keeps no finished tool artifact with maxFinishedTools 0, only the open ones and the answer', () => {
    const task = newTask(100, 0);
    task.toolFrame({ toolCallId: 'a', name: 'x', phase: 'started' });
    task.toolFrame({ toolCallId: 'b', name: 'x', phase: 'started' });
    task.toolFrame({ toolCallId: 'a', name: 'x', phase: 'completed' });
    expect(task.snapshot().artifacts.map((a) => a.artifactId)).toEqual(['tool-call-b']);
  });

  it('closes open tools as failed "cancelled" when cancelled, then ends CANCELED with the reason', () => {
    const task = newTask();
    task.toolFrame({ toolCallId: 'a', name: 'slow', phase: 'started' });
    task.cancel('stop');
    const frame = task.log.get(3)!;
    expect(parseToolCall(JSON.parse(frame.json).artifactUpdate.artifact.parts)).toMatchObject({ toolCallId: 'a', phase: 'failed', error: 'cancelled' });
    expect(task.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(JSON.parse(task.log.get(4)!.json).statusUpdate.status.message.parts[0].text).toBe('stop');
  });

  it('ignores anything after the terminal status', () => {
    const task = newTask();
    task.fail('boom');
    const last = task.log.lastSeq;
    task.narrate('late');
    task.toolFrame({ toolCallId: 'x', name: 'n', phase: 'started' });
    task.complete('late');
    task.cancel('late');
    expect(task.log.lastSeq).toBe(last);
    expect(task.state).toBe(TaskState.TASK_STATE_FAILED);
  });

  it('settles once: the promise resolves and whenSettled callbacks run, also those added later', async () => {
    const task = newTask();
    const calls: string[] = [];
    task.whenSettled(() => calls.push('before'));
    task.complete('done');
    task.whenSettled(() => calls.push('after'));
    await task.settled;
    expect(calls).toEqual(['before', 'after']);
  });

  it('cuts history to historyLength and omits artifacts on request', () => {
    const task = newTask();
    task.complete('done');
    expect(task.snapshot({ historyLength: 0 }).history).toEqual([]);
    expect(task.snapshot({ historyLength: 1 }).history.map((m) => m.role)).toEqual([Role.ROLE_AGENT]);
    expect(task.snapshot({ historyLength: 5 }).history).toHaveLength(2);
    expect(task.snapshot({ includeArtifacts: false }).artifacts).toEqual([]);
  });

  it('notes args that JSON cannot carry instead of dropping the frame', () => {
    const task = newTask();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    task.toolFrame({ toolCallId: 'a', name: 'n', phase: 'started', args: { big: BigInt(1) } });
    task.toolFrame({ toolCallId: 'a', name: 'n', phase: 'completed', result: cyclic });
    const started = parseToolCall(JSON.parse(task.log.get(2)!.json).artifactUpdate.artifact.parts);
    const completed = parseToolCall(JSON.parse(task.log.get(3)!.json).artifactUpdate.artifact.parts);
    expect(started).toMatchObject({ phase: 'started', args: expect.stringContaining('not serialisable') });
    expect(completed).toMatchObject({ phase: 'completed', result: expect.stringContaining('not serialisable') });
  });

  describe('follow', () => {
    it('replays the events after the cursor, then delivers new ones live, each exactly once', () => {
      const task = newTask();
      task.narrate('one');
      task.narrate('two');
      const listener = collector(1);
      const stop = task.follow(listener);
      expect(listener.events.map((e) => e.seq)).toEqual([2, 3]);
      task.narrate('three');
      expect(listener.events.map((e) => e.seq)).toEqual([2, 3, 4]);
      stop();
      task.narrate('four');
      expect(listener.events.map((e) => e.seq)).toEqual([2, 3, 4]);
      expect(task.listenerCount).toBe(0);
    });

    it('keeps order when a listener causes a new event while being handed one', () => {
      const task = newTask();
      const seen: number[] = [];
      const reentrant: TaskListener = {
        cursor: 0,
        push: (e) => {
          seen.push(e.seq);
          if (e.seq === 2) task.narrate('caused by the listener');
        },
        overrun: () => undefined,
      };
      const other = collector(0);
      task.follow(reentrant);
      task.follow(other);
      task.narrate('first');
      task.narrate('second');
      expect(seen).toEqual([1, 2, 3, 4]);
      expect(other.events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    });

    it('hands an event to no follower stopped during its delivery, and to one started then exactly once', () => {
      const task = newTask();
      const late = collector(0);
      const stopped = collector(0);
      let stopOther: () => void = () => undefined;
      const first: TaskListener = {
        cursor: 0,
        push: (e) => {
          if (e.seq !== 2) return;
          stopOther();
          task.follow(late);
        },
        overrun: () => undefined,
      };
      task.follow(first);
      stopOther = task.follow(stopped);
      task.narrate('one');
      task.narrate('two');
      expect(stopped.events.map((e) => e.seq)).toEqual([1]);
      expect(late.events.map((e) => e.seq)).toEqual([1, 2, 3]);
      expect(task.listenerCount).toBe(2);
      // Following twice is following once.
      task.follow(late);
      task.narrate('three');
      expect(late.events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
      expect(task.listenerCount).toBe(2);
    });

    it('leaves events in the log while a listener is not ready, and hands them over on resume', () => {
      const task = newTask();
      let ready = false;
      const slow = { ...collector(0), ready: () => ready };
      task.follow(slow);
      task.narrate('one');
      task.narrate('two');
      expect(slow.events).toEqual([]);
      ready = true;
      task.resume(slow);
      expect(slow.events.map((e) => e.seq)).toEqual([1, 2, 3]);
    });

    it('holds the events a paused listener still needs, up to twice the cap', () => {
      const task = newTask(3);
      let ready = false;
      const slow = { ...collector(0), ready: () => ready };
      task.follow(slow);
      for (let i = 0; i < 4; i++) task.narrate(`line ${i}`);
      expect(task.log.size).toBe(5);
      ready = true;
      task.resume(slow);
      expect(slow.events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
      expect(task.log.size).toBe(3);
    });

    it('drops a paused listener that fell further behind than that, and says so', () => {
      const task = newTask(3);
      let ready = false;
      const overrun = jest.fn();
      const slow = { ...collector(0), ready: () => ready, overrun };
      task.follow(slow);
      for (let i = 0; i < 6; i++) task.narrate(`line ${i}`);
      ready = true;
      task.resume(slow);
      expect(overrun).toHaveBeenCalledTimes(1);
      expect(slow.events).toEqual([]);
      expect(task.listenerCount).toBe(0);
    });

    it('keeps what the furthest behind of several followers needs, and drops every one that fell out in the same event', () => {
      const task = newTask(3);
      // Followed and left first: its followers list was the shared empty one before these.
      task.follow(collector(0))();
      const dropped: string[] = [];
      const paused = (name: string): TaskListener & { events: TaskEvent[] } => ({ ...collector(1), ready: () => false, overrun: () => dropped.push(name) });
      const [a, b] = [paused('a'), paused('b')];
      const live = collector(1);
      for (const listener of [a, b, live]) task.follow(listener);
      for (let i = 0; i < 4; i++) task.narrate(`line ${i}`);
      expect(task.log.firstSeq).toBe(2);
      expect(task.log.size).toBe(4);
      expect(dropped).toEqual([]);
      // Up to twice the cap they stay; one more, and the event a and b need next goes, with both of them.
      task.narrate('line 4');
      task.narrate('line 5');
      expect(task.log.size).toBe(6);
      expect(dropped).toEqual([]);
      task.narrate('line 6');
      expect(dropped).toEqual(['a', 'b']);
      expect(task.listenerCount).toBe(1);
      task.narrate('line 7');
      expect(task.log.size).toBe(3);
      expect(live.events.map((e) => e.seq)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
      expect([a.events, b.events]).toEqual([[], []]);
    });

    it('refuses a cursor whose following events are no longer retained', () => {
      const task = newTask(3);
      for (let i = 0; i < 5; i++) task.narrate(`line ${i}`);
      expect(task.log.firstSeq).toBe(4);
      expect(() => task.follow(collector(1))).toThrow('no longer holds');
      const fromRetained = collector(3);
      task.follow(fromRetained);
      expect(fromRetained.events.map((e) => e.seq)).toEqual([4, 5, 6]);
    });
  });

  it('never builds a Task per event: 10,000 tool calls, one Task serialised (the first event)', () => {
    const toJson = jest.spyOn(StreamResponse, 'toJSON');
    try {
      const task = newTask(100);
      for (let i = 0; i < 10_000; i++) {
        task.toolFrame({ toolCallId: `c${i}`, name: 'n', phase: 'started' });
        task.toolFrame({ toolCallId: `c${i}`, name: 'n', phase: 'completed' });
      }
      task.complete('done');
      expect(toJson.mock.calls.filter(([response]) => response.payload?.$case === 'task')).toHaveLength(1);
      expect(task.log.lastSeq).toBe(20_003);
      expect(task.log.size).toBe(100);
    } finally {
      toJson.mockRestore();
    }
  });

  it('keeps no event object once its followers took a tool frame: its log reads back the same from its open block', () => {
    const task = newTask(1_000);
    const listener = collector();
    task.follow(listener);
    task.narrate('one');
    // No tool frame yet: the newest events stay as they are, and no block opens (an empty task's case).
    expect(blocksOf(task)).toHaveLength(0);
    const objects = (): number => {
      const log = task.log as unknown as { tail: unknown[]; tailStart: number };
      return log.tail.slice(log.tailStart).filter((event) => event !== undefined).length;
    };
    expect(objects()).toBe(2);
    for (let i = 0; i < 40; i++) {
      task.toolFrame({ toolCallId: `c${i}`, name: 'n', phase: 'started', args: { i } });
      expect(objects()).toBe(0);
      task.toolFrame({ toolCallId: `c${i}`, name: 'n', phase: 'completed', result: { i } });
      expect(objects()).toBe(0);
    }
    task.narrate('two');
    expect(objects()).toBe(1);
    expect(listener.events.map((event) => event.seq)).toEqual([...Array(83).keys()].map((i) => i + 1));
    expect(readBackAsLogged(task, listener.events)).toBe(83);
    // A tool frame's event read back is made again from the block's strings, not the one handed out.
    expect(task.log.get(listener.events[10].seq)).not.toBe(listener.events[10]);
  });

  it('serialises each event once, whatever the number of listeners; the 0.3 shape once on demand', () => {
    const toJson = jest.spyOn(StreamResponse, 'toJSON');
    try {
      const task = newTask();
      const listeners = [collector(), collector(), collector()];
      for (const l of listeners) task.follow(l);
      toJson.mockClear();
      for (let i = 0; i < 50; i++) task.narrate(`line ${i}`);
      expect(toJson).toHaveBeenCalledTimes(50);
      // Tool frames are written by hand (see above), never through the codec.
      for (let i = 0; i < 50; i++) task.toolFrame({ toolCallId: `c${i}`, name: 'n', phase: 'started', args: { i } });
      expect(toJson).toHaveBeenCalledTimes(50);
      const event = listeners[0].events[51];
      expect(event.isToolFrame).toBe(true);
      for (const l of listeners) expect(l.events[51]).toBe(event);
      const v03 = event.jsonFor('0.3');
      expect(event.jsonFor('0.3')).toBe(v03);
      expect(JSON.parse(v03)).toMatchObject({ kind: 'artifact-update', artifact: { parts: [{ kind: 'data' }] } });
    } finally {
      toJson.mockRestore();
    }
  });

  it('resumed from another writer\'s snapshot: numbering goes on from its last event, its open tools are closed when it fails', () => {
    const first = newTask();
    first.narrate('working');
    first.toolFrame({ toolCallId: 'open', name: 'slow', phase: 'started', timestamp: new Date().toISOString() });
    first.toolFrame({ toolCallId: 'done', name: 'calc', phase: 'started', timestamp: new Date().toISOString() });
    first.toolFrame({ toolCallId: 'done', name: 'calc', phase: 'completed', result: 2, timestamp: new Date().toISOString() });
    const snapshot = StreamResponse.fromJSON(StreamResponse.toJSON({ payload: { $case: 'task', value: first.snapshot() } }));
    const task = snapshot.payload?.$case === 'task' ? snapshot.payload.value : undefined;
    const resumed = new TaskRecord({
      id: 't1',
      contextId: 'c1',
      owner: undefined,
      message: userMessage(),
      text: 'hello',
      maxEvents: 100,
      maxFinishedTools: 100,
      resumed: { snapshot: task!, lastSeq: first.lastSeq },
    });
    expect(resumed.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(resumed.lastSeq).toBe(first.lastSeq);
    const listener = collector(first.lastSeq);
    resumed.follow(listener);
    resumed.fail('lost');
    expect(listener.events.map((e) => e.seq)).toEqual([first.lastSeq + 1, first.lastSeq + 2]);
    const frames = listener.events.filter((e) => e.isToolFrame).map((e) => JSON.parse(e.json) as { artifactUpdate: { artifact: { parts: unknown[] } } });
    expect(frames.map((f) => parseToolCall(f.artifactUpdate.artifact.parts))).toEqual([expect.objectContaining({ toolCallId: 'open', phase: 'failed', error: 'lost' })]);
    expect(resumed.isTerminal).toBe(true);
  });

  it('resumed with finished tools (ids JSON escapes or not): their later frames are written as the SDK codec does, in their places', () => {
    const ids = ['a"b', 'plain', 'x\ud800', 'other'];
    const first = newTask();
    for (const id of ids) first.toolFrame({ toolCallId: id, name: 'n', phase: 'completed', result: 0 });
    const snapshot = StreamResponse.fromJSON(StreamResponse.toJSON({ payload: { $case: 'task', value: first.snapshot() } }));
    const task = snapshot.payload?.$case === 'task' ? snapshot.payload.value : undefined;
    const resumed = new TaskRecord({ id: 't1', contextId: 'c1', owner: undefined, message: userMessage(), text: 'hello', maxEvents: 100, maxFinishedTools: 3, resumed: { snapshot: task!, lastSeq: first.lastSeq } });
    // Restored past the cap: the oldest finished one went.
    expect(resumed.snapshot().artifacts.map((a) => a.artifactId)).toEqual(ids.slice(1).map((id) => `tool-call-${id}`));
    const codec = (f: ToolCallArtifactData): string =>
      JSON.stringify(StreamResponse.toJSON({ payload: { $case: 'artifactUpdate', value: { taskId: 't1', contextId: 'c1', artifact: toolArtifact(f), append: false, lastChunk: f.phase !== 'started', metadata: undefined } } }));
    const frames: ToolCallArtifactData[] = [
      { toolCallId: 'x\ud800', name: 'n', phase: 'completed', result: 1 },
      { toolCallId: 'plain', name: 'n', phase: 'started', args: 2 },
    ];
    for (const f of frames) {
      resumed.toolFrame(f);
      expect(resumed.log.get(resumed.lastSeq)?.json).toBe(codec(f));
    }
    expect(resumed.snapshot().artifacts.map((a) => parseToolCall(a.parts))).toEqual([
      expect.objectContaining({ toolCallId: 'plain', phase: 'started', args: 2 }),
      expect.objectContaining({ toolCallId: 'x\ud800', phase: 'completed', result: 1 }),
      expect.objectContaining({ toolCallId: 'other', phase: 'completed', result: 0 }),
    ]);
    // The restored one has no event of this writer's; the refinished one has.
    expect(resumed.snapshotArtifacts().map((a) => (a instanceof ToolFrameEvent ? a.seq : a.artifactId))).toEqual([resumed.lastSeq, resumed.lastSeq - 1, 'tool-call-other']);
  });

  it('resumed with open tools whose ids JSON escapes: their later frames are written as the SDK codec does', () => {
    const ids = ['a"b', 'back\\slash', 'x\ud800', 'plain'];
    const first = newTask();
    for (const id of ids) first.toolFrame({ toolCallId: id, name: 'n', phase: 'started' });
    const snapshot = StreamResponse.fromJSON(StreamResponse.toJSON({ payload: { $case: 'task', value: first.snapshot() } }));
    const task = snapshot.payload?.$case === 'task' ? snapshot.payload.value : undefined;
    const resumed = new TaskRecord({ id: 't1', contextId: 'c1', owner: undefined, message: userMessage(), text: 'hello', maxEvents: 100, maxFinishedTools: 100, resumed: { snapshot: task!, lastSeq: first.lastSeq } });
    const codec = (f: ToolCallArtifactData): string =>
      JSON.stringify(StreamResponse.toJSON({ payload: { $case: 'artifactUpdate', value: { taskId: 't1', contextId: 'c1', artifact: toolArtifact(f), append: false, lastChunk: f.phase !== 'started', metadata: undefined } } }));
    const frames: ToolCallArtifactData[] = [];
    for (const id of ids) frames.push({ toolCallId: id, name: 'n', phase: 'completed', result: 1 }, { toolCallId: id, name: 'n', phase: 'started', args: 2 });
    for (const f of frames) {
      resumed.toolFrame(f);
      expect(resumed.log.get(resumed.lastSeq)?.json).toBe(codec(f));
    }
    resumed.fail('lost');
    const closed = ids.map((id) => resumed.log.get(resumed.lastSeq - ids.length + ids.indexOf(id))?.json);
    expect(closed.map((json) => JSON.parse(json as string).artifactUpdate.artifact.artifactId)).toEqual(ids.map((id) => `tool-call-${id}`));
    expect(resumed.snapshotArtifacts().map((a) => (a instanceof ToolFrameEvent ? JSON.parse(a.json).artifactUpdate.artifact.artifactId : a.artifactId))).toEqual(ids.map((id) => `tool-call-${id}`));
  });
});
