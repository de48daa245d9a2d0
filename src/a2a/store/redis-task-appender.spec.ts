import { Role } from '@a2a-js/sdk';
import { TaskEvent, ToolFrameEvent } from '../task-event';
import { TaskRecord, textPart } from '../task-record';
import { appendTaskPart, encodeAppend, ownedBuffers, RedisTaskAppender, type AppendCall, type AppendHead } from './redis-task-appender';

/** The payload as APPEND_SCRIPT reads it: nine head fields, the lease and the channel by their byte lengths, then the batch. */
function decodePayload(arg: string | Buffer): { head: string[]; lease: string; channel: string; batch: { seq: number; flags: string; json: string }[] } {
  const bytes = Buffer.from(arg);
  let at = 0;
  const head: string[] = [];
  while (head.length < 9) {
    const space = bytes.indexOf(' ', at);
    head.push(bytes.subarray(at, space).toString());
    at = space + 1;
  }
  const lease = bytes.subarray(at, (at += Number(head[7]))).toString();
  const channel = bytes.subarray(at, (at += Number(head[8]))).toString();
  const text = bytes.subarray(at).toString();
  if (text !== '') expect(text[0]).toBe('\n');
  const batch =
    text === ''
      ? []
      : text
          .slice(1)
          .split('\n')
          .map((line) => {
            const a = line.indexOf(' ');
            const b = line.indexOf(' ', a + 1);
            return { seq: Number(line.slice(0, a)), flags: line.slice(a + 1, b), json: line.slice(b + 1) };
          });
  return { head, lease, channel, batch };
}

/** A call's arguments as APPEND_SCRIPT reads them: the head's fields, and the optional arguments where the head says they follow. */
type AppendArgs = Omit<AppendHead, 'member' | 'snapshot' | 'answer'> & { lease: string; member?: string; snapshot?: string; answer?: string };

function readArgs(args: (string | Buffer)[]): AppendArgs {
  const { head, lease } = decodePayload(args[0]);
  const [maxlen, state, statusTime, lastSeq, ttlMs, publish, extra] = head;
  const optional = args.slice(1).map(String);
  return {
    lease,
    maxlen: Number(maxlen),
    state,
    statusTime: Number(statusTime),
    lastSeq: Number(lastSeq),
    ttlMs: Number(ttlMs),
    publish: publish === '1',
    member: extra.includes('i') ? optional.shift() : undefined,
    snapshot: extra.includes('s') ? optional.shift() : undefined,
    answer: extra.includes('a') ? optional.shift() : undefined,
  };
}

/** The script's side as a list of calls: each resolves (or fails) when the test says. */
class Calls {
  readonly sent: { seqs: number[]; snapshot: boolean; args: AppendArgs; resolve: (v: number) => void; reject: (e: Error) => void }[] = [];
  readonly stored: number[] = [];
  append: AppendCall = (keys, args) =>
    new Promise((resolve, reject) => {
      expect(keys.map(String)).toEqual(['t', 'e', 'o']);
      expect(decodePayload(args[0]).channel).toBe('c');
      const seqs = decodePayload(args[0]).batch.map((e) => e.seq);
      const read = readArgs(args);
      expect(args).toHaveLength(1 + [read.member, read.snapshot, read.answer].filter((a) => a !== undefined).length);
      this.sent.push({
        seqs,
        snapshot: read.snapshot !== undefined,
        args: read,
        resolve: (v) => {
          if (v === 1) this.stored.push(...seqs);
          resolve(v);
        },
        reject,
      });
    });
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * @param later how a call that waits for MIN_CALL_GAP_MS is released (default: at once, so that
 * the cases about what a call carries need not wait for it)
 */
function setUp(
  maxEventsPerTask = 1_000,
  later: (send: () => void) => void = queueMicrotask,
  minCallGapMs?: number,
  afterFailure?: (err: unknown) => Promise<unknown> | undefined,
): {
  calls: Calls;
  appender: RedisTaskAppender;
  record: TaskRecord;
  warnings: string[];
  overflows: string[];
  stored: { seq: number; published?: number[] }[];
} {
  const calls = new Calls();
  const warnings: string[] = [];
  const overflows: string[] = [];
  const stored: { seq: number; published?: number[] }[] = [];
  const appender = new RedisTaskAppender({
    onStored: (seq, _state, events) => stored.push({ seq, published: events.map((e) => e.seq) }),
    lease: 'lease-1',
    keys: ['t', 'e', 'o'],
    channel: 'c',
    ownerMember: 't1',
    maxEventsPerTask,
    runningTtlMs: 60_000,
    append: calls.append,
    later,
    minCallGapMs,
    afterFailure,
    warn: (m) => warnings.push(m),
    onOverflow: (reason) => {
      overflows.push(reason);
      record.fail(reason);
    },
  });
  const record = new TaskRecord({
    id: 't1',
    contextId: 'c1',
    owner: undefined,
    message: { messageId: 'm1', contextId: 'c1', taskId: 't1', role: Role.ROLE_USER, parts: [textPart('hi')], metadata: undefined, extensions: [], referenceTaskIds: [] },
    text: 'hi',
    maxEvents: maxEventsPerTask * 2,
    maxFinishedTools: 10,
    onEvent: (event) => appender.enqueue(event),
  });
  appender.record = record;
  return { calls, appender, record, warnings, overflows, stored };
}

/** The Task and the WORKING state the first narration makes, each stored by a call of its own. */
async function storeWorking(calls: Calls, record: TaskRecord): Promise<void> {
  await turn();
  calls.sent[0].resolve(1);
  record.narrate('working');
  await turn();
  calls.sent[1].resolve(1);
  await turn();
}

describe('encodeAppend', () => {
  const head: AppendHead = { maxlen: 1_000, state: 'TASK_STATE_WORKING', statusTime: 1_733_300_000_123, lastSeq: 10, ttlMs: 0, publish: true, member: true, snapshot: false, answer: true };

  it('writes the head, the lease and channel by their byte lengths, then each event as a newline, its seq, flags and JSON, byte for byte, whatever the JSON holds', () => {
    const json = (seq: number): string => JSON.stringify({ seq, text: `a b\nc — ${'é'.repeat(seq)} 🙂` });
    const events = [new TaskEvent(7, json(7)), new TaskEvent(8, json(8), true), new TaskEvent(9, json(9), true, true), new TaskEvent(10, json(10), false, true)];
    const buffer = encodeAppend(head, appendTaskPart('lease é', 'chan 🙂'), events);
    expect(buffer.length).toBe(Buffer.byteLength(buffer.toString()));
    expect(decodePayload(buffer)).toEqual({
      head: ['1000', 'TASK_STATE_WORKING', '1733300000123', '10', '0', '1', 'ia', '8', '9'],
      lease: 'lease é',
      channel: 'chan 🙂',
      batch: [
        { seq: 7, flags: '-', json: json(7) },
        { seq: 8, flags: 't-', json: json(8) },
        { seq: 9, flags: 'te-', json: json(9) },
        { seq: 10, flags: 'e-', json: json(10) },
      ],
    });
    const none = encodeAppend({ ...head, ttlMs: 60_000, publish: false, member: false, answer: false }, appendTaskPart('l', 'c'), []);
    expect(none.toString()).toBe('1000 TASK_STATE_WORKING 1733300000123 10 60000 0 - 1 1 lc');
  });

  it("writes a tool frame's event from its pieces, the same bytes as its JSON", () => {
    const opening = '{"artifactUpdate":{"taskId":"t1","contextId":"ctx-ünï 🙂","artifact":{"artifactId":';
    const frames = [
      new ToolFrameEvent(12, opening, '"tool-é"', JSON.stringify({ toolCallId: 'é', phase: 'started', args: { q: '日本 a b' } }), false),
      new ToolFrameEvent(123456, opening, '"tool-2"', JSON.stringify({ toolCallId: '2', phase: 'completed', result: 4 }), true),
    ];
    const buffer = encodeAppend(head, appendTaskPart('l', 'c'), frames);
    expect(buffer.length).toBe(Buffer.byteLength(buffer.toString()));
    expect(decodePayload(buffer).batch).toEqual([
      { seq: 12, flags: 't-', json: frames[0].json },
      { seq: 123456, flags: 't-', json: frames[1].json },
    ]);
    expect(JSON.parse(frames[1].json)).toMatchObject({ artifactUpdate: { lastChunk: true } });
  });
});

describe('ownedBuffers', () => {
  it("holds each part's bytes in one allocation of their own, not a slice of Node's shared pool", () => {
    const parts = ownedBuffers([appendTaskPart('lease é', 'chan 🙂'), 'owner-1', 'toolstream:task:é', '']);
    expect(parts.map((part) => part.toString())).toEqual([appendTaskPart('lease é', 'chan 🙂').toString(), 'owner-1', 'toolstream:task:é', '']);
    const total = parts.reduce((sum, part) => sum + part.length, 0);
    for (const part of parts) expect(part.buffer.byteLength).toBe(total);
    expect(new Set(parts.map((part) => part.buffer)).size).toBe(1);
    // What Buffer.from made instead: a slice of the pool's 8 KiB slab.
    expect(Buffer.from('owner-1').buffer.byteLength).toBe(Buffer.poolSize);
  });
});

describe('RedisTaskAppender', () => {
  it('keeps one call in flight and sends everything that came meanwhile in the next one, in order', async () => {
    const { calls, record } = setUp();
    await turn();
    expect(calls.sent.map((c) => c.seqs)).toEqual([[1]]);
    for (let i = 0; i < 50; i++) record.narrate(`step ${i}`);
    await turn();
    // Still one call: the first has not answered.
    expect(calls.sent).toHaveLength(1);
    calls.sent[0].resolve(1);
    await turn();
    expect(calls.sent).toHaveLength(2);
    expect(calls.sent[1].seqs).toEqual(Array.from({ length: 50 }, (_, i) => i + 2));
    calls.sent[1].resolve(1);
    await turn();
    expect(calls.stored).toEqual(Array.from({ length: 51 }, (_, i) => i + 1));
  });

  it('stores the snapshot on a state change and at the end, not with every batch', async () => {
    const { calls, record, appender } = setUp();
    await turn();
    calls.sent[0].resolve(1);
    record.narrate('working');
    await turn();
    calls.sent[1].resolve(1);
    record.narrate('still working');
    await turn();
    calls.sent[2].resolve(1);
    record.complete('done');
    await turn();
    calls.sent[3].resolve(1);
    await appender.drained();
    expect(calls.sent.map((c) => c.snapshot)).toEqual([true, true, false, true]);
  });

  it('puts the periodic snapshots after a state change at a random point of the period (tasks begun together do not snapshot together), then one per period', async () => {
    let clock = 1_000_000;
    const now = jest.spyOn(Date, 'now').mockImplementation(() => clock);
    const random = jest.spyOn(Math, 'random').mockReturnValue(0.75);
    try {
      const { calls, record } = setUp();
      const step = async (ms: number): Promise<boolean> => {
        clock += ms;
        const before = calls.sent.length;
        record.narrate(`at ${clock}`);
        await turn();
        for (let i = before; i < calls.sent.length; i++) calls.sent[i].resolve(1);
        await turn();
        for (let i = before; i < calls.sent.length; i++) calls.sent[i].resolve(1);
        await turn();
        return calls.sent.slice(before).some((c) => c.snapshot);
      };
      await turn();
      calls.sent[0].resolve(1);
      // The state change (WORKING) stores its snapshot; the next is due a quarter of the period later.
      expect(await step(0)).toBe(true);
      expect(await step(200)).toBe(false);
      expect(await step(100)).toBe(true);
      // From then on, one per period.
      expect(await step(900)).toBe(false);
      expect(await step(100)).toBe(true);
    } finally {
      now.mockRestore();
      random.mockRestore();
    }
  });

  it('sends a periodic snapshot in a call of its own after the batch, and along with the next batch when events keep coming', async () => {
    // maxEventsPerTask 8: a snapshot is due every 2 events (a quarter of the cap) besides the state changes.
    const { calls, record, appender, stored } = setUp(8);
    await storeWorking(calls, record);
    record.narrate('a');
    record.narrate('b');
    await turn();
    // The batch goes without the snapshot (its events are not held back by it) ...
    expect(calls.sent[2]).toMatchObject({ seqs: [3, 4], snapshot: false });
    calls.sent[2].resolve(1);
    await turn();
    // ... which follows at once, alone, describing the task at the newest stored event.
    expect(calls.sent[3]).toMatchObject({ seqs: [], snapshot: true });
    expect(calls.sent[3].args.lastSeq).toBe(4);
    calls.sent[3].resolve(1);
    await turn();
    record.narrate('c');
    record.narrate('d');
    await turn();
    expect(calls.sent[4]).toMatchObject({ seqs: [5, 6], snapshot: false });
    // Events keep coming: the snapshot rides with the next batch rather than waiting for a gap.
    record.narrate('e');
    calls.sent[4].resolve(1);
    await turn();
    expect(calls.sent[5]).toMatchObject({ seqs: [7], snapshot: true });
    calls.sent[5].resolve(1);
    await appender.drained();
    expect(calls.sent).toHaveLength(6);
    expect(calls.stored).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // The snapshot-only call tells no follower anything new.
    expect(stored.map((s) => s.seq)).toEqual([1, 2, 4, 6, 7]);
  });

  it('stores a snapshot with a batch that would leave the stored one maxEventsPerTask behind, not in a call after it', async () => {
    // Redis keeps every event after the stored snapshot (up to twice the cap): without a new one
    // with this batch, it would keep 13 events where the cap is 8.
    const { calls, record, appender } = setUp(8);
    await storeWorking(calls, record);
    for (let i = 0; i < 11; i++) record.narrate(`step ${i}`);
    await turn();
    expect(calls.sent[2]).toMatchObject({ seqs: Array.from({ length: 11 }, (_, i) => i + 3), snapshot: true });
    expect(calls.sent[2].args.lastSeq).toBe(13);
    calls.sent[2].resolve(1);
    await appender.drained();
    expect(calls.sent).toHaveLength(3);
  });

  it('renews the TTL only when due and the owner index only when the status time moved, and tells when a batch is stored', async () => {
    const { calls, record, appender, stored } = setUp();
    await turn();
    calls.sent[0].resolve(1);
    record.narrate('working');
    await turn();
    calls.sent[1].resolve(1);
    record.toolFrame({ toolCallId: 'c1', name: 'clock', phase: 'started', args: {} });
    record.toolFrame({ toolCallId: 'c1', name: 'clock', phase: 'completed', result: '12:00' });
    await turn();
    calls.sent[2].resolve(1);
    record.complete('done');
    await turn();
    calls.sent[3].resolve(1);
    await appender.drained();
    expect(calls.sent.map((c) => c.args.ttlMs)).toEqual([60_000, 0, 0, 0]);
    expect(calls.sent[0].args.member).toBe('t1');
    // Tool frames leave the status (and its time) as it was: no index write.
    expect(calls.sent[2].args.member).toBeUndefined();
    expect(calls.sent.map((c) => c.args.answer)).toEqual([undefined, undefined, undefined, 'done']);
    expect(calls.sent.map((c) => c.args.publish)).toEqual([true, true, true, true]);
    expect(calls.sent.map((c) => [c.args.lease, c.args.maxlen])).toEqual(Array(4).fill(['lease-1', 1_000]));
    expect(calls.sent[3].args).toMatchObject({ state: 'TASK_STATE_COMPLETED', statusTime: record.statusTime, lastSeq: record.lastSeq });
    expect(stored).toEqual([
      { seq: 1, published: [1] },
      { seq: 2, published: [2] },
      { seq: 4, published: [3, 4] },
      { seq: record.lastSeq, published: [5, 6].slice(0, record.lastSeq - 4) },
    ]);
    expect(appender.storedSeq).toBe(record.lastSeq);
  });

  it('waits for the gap after a call before the next while the run writes that fast, but not for a state change, the end, or someone waiting for the events', async () => {
    const gap: (() => void)[] = [];
    // A gap of a minute: every call here comes within it, however slow the machine.
    const { calls, record, appender } = setUp(1_000, (send) => gap.push(send), 60_000);
    await turn();
    calls.sent[0].resolve(1);
    record.narrate('working');
    await turn();
    // A state change goes at once.
    expect(calls.sent).toHaveLength(2);
    calls.sent[1].resolve(1);
    record.narrate('a');
    await turn();
    // The call before left less than the gap ago: this one waits, gathering what comes meanwhile.
    expect(calls.sent).toHaveLength(2);
    expect(gap).toHaveLength(1);
    record.narrate('b');
    await turn();
    expect(gap).toHaveLength(1);
    gap.shift()?.();
    await turn();
    expect(calls.sent[2].seqs).toEqual([3, 4]);
    record.narrate('c');
    calls.sent[2].resolve(1);
    await turn();
    expect(gap).toHaveLength(1);
    // Someone waits for the events (an expiry, close): they go now.
    const drained = appender.drained();
    await turn();
    expect(calls.sent[3].seqs).toEqual([5]);
    calls.sent[3].resolve(1);
    await drained;
    // The gap's release comes too late to send anything twice.
    gap.shift()?.();
    record.complete('done');
    await turn();
    // The end goes at once.
    expect(calls.sent).toHaveLength(5);
    expect(gap).toHaveLength(0);
    calls.sent[4].resolve(1);
    await appender.drained();
    expect(calls.stored).toEqual(Array.from({ length: record.lastSeq }, (_, i) => i + 1));
  });

  it('keeps the events while Redis fails and sends them again in order, once, when it returns', async () => {
    const { calls, record, appender, warnings } = setUp();
    await turn();
    calls.sent[0].reject(new Error('Connection is closed.'));
    record.narrate('a');
    record.narrate('b');
    await new Promise((r) => setTimeout(r, 80));
    // The retry carries the failed batch first, then what came after it.
    expect(calls.sent[1].seqs).toEqual([1, 2, 3]);
    calls.sent[1].reject(new Error('Connection is closed.'));
    await turn();
    record.narrate('c');
    const drained = appender.drained();
    await new Promise((r) => setTimeout(r, 20));
    calls.sent[2].resolve(1);
    await drained;
    expect(calls.stored).toEqual([1, 2, 3, 4]);
    // One warning for the outage and one when it is over, not one per retry.
    expect(warnings.filter((w) => w.includes('failed'))).toHaveLength(1);
    expect(warnings.filter((w) => w.includes('back'))).toHaveLength(1);
  });

  it('sends the same call again, once, when its failure says it can go again (the script missing after a restart): no outage, no warning', async () => {
    let load = (): void => undefined;
    const noScript = (err: unknown): Promise<void> | undefined => (String(err).includes('NOSCRIPT') ? new Promise<void>((resolve) => (load = resolve)) : undefined);
    const { calls, record, appender, warnings } = setUp(1_000, queueMicrotask, undefined, noScript);
    await turn();
    calls.sent[0].resolve(1);
    record.narrate('a');
    await turn();
    calls.sent[1].reject(new Error('NOSCRIPT No matching script. Please use EVAL.'));
    record.narrate('b');
    await turn();
    // Nothing goes before the script is loaded.
    expect(calls.sent).toHaveLength(2);
    load();
    await turn();
    expect(calls.sent[2].seqs).toEqual(calls.sent[1].seqs);
    expect(calls.sent[2].args).toEqual(calls.sent[1].args);
    expect(warnings).toEqual([]);
    // Failing so again: an outage, retried later with what came meanwhile.
    calls.sent[2].reject(new Error('NOSCRIPT No matching script. Please use EVAL.'));
    await new Promise((r) => setTimeout(r, 80));
    expect(calls.sent[3].seqs).toEqual([...calls.sent[1].seqs, record.lastSeq]);
    calls.sent[3].resolve(1);
    await appender.drained();
    expect(calls.stored).toEqual(Array.from({ length: record.lastSeq }, (_, i) => i + 1));
    expect(warnings.filter((w) => w.includes('failed'))).toHaveLength(1);
  });

  it('fails the task when more than maxEventsPerTask events wait for Redis, and still stores them all later', async () => {
    const { calls, record, appender, overflows } = setUp(20);
    await turn();
    calls.sent[0].reject(new Error('Connection is closed.'));
    for (let i = 0; i < 30; i++) record.narrate(`step ${i}`);
    await turn();
    expect(overflows).toHaveLength(1);
    expect(overflows[0]).toContain('maxEventsPerTask (20)');
    expect(record.isTerminal).toBe(true);
    const drained = appender.drained();
    await turn();
    calls.sent[calls.sent.length - 1].resolve(1);
    await drained;
    expect(calls.stored).toEqual(Array.from({ length: record.lastSeq }, (_, i) => i + 1));
    expect(record.status.message?.parts[0].content).toEqual({ $case: 'text', value: overflows[0] });
  });

  it('a backlog past maxEventsPerTask built during one healthy round trip is no outage: no failure, all stored', async () => {
    const { calls, record, appender, overflows } = setUp(20);
    await turn();
    // The first call is still on its way while the run writes 30 events.
    for (let i = 0; i < 30; i++) record.narrate(`step ${i}`);
    await turn();
    calls.sent[0].resolve(1);
    await turn();
    calls.sent[1].resolve(1);
    await appender.drained();
    expect(overflows).toEqual([]);
    expect(record.isTerminal).toBe(false);
    expect(calls.stored).toEqual(Array.from({ length: 31 }, (_, i) => i + 1));
  });

  it('a backlog past maxEventsPerTask fails the task once the call in flight fails (Redis gone)', async () => {
    const { calls, record, overflows } = setUp(20);
    await turn();
    for (let i = 0; i < 30; i++) record.narrate(`step ${i}`);
    await turn();
    expect(overflows).toEqual([]);
    calls.sent[0].reject(new Error('Connection is closed.'));
    await turn();
    expect(overflows).toHaveLength(1);
    expect(record.isTerminal).toBe(true);
  });
});
