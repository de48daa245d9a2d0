import Redis from 'ioredis';
import { TaskEvent } from '../src/a2a/task-event';
import { APPEND_SCRIPT, appendTaskPart, encodeAppend, type AppendHead } from '../src/a2a/store/redis-task-appender';
import { ShaScript } from '../src/a2a/store/redis-scripts';
import { startRedis, type TestRedis } from './support/redis-server';

const KEYS = ['t:task', 't:events', 't:owner'];
const CHANNEL = 't:channel';

/** The script's ARGV for a batch (see APPEND_SCRIPT): the payload (head, lease, channel, batch), then the optional member, snapshot and answer. */
function argv(events: TaskEvent[], lease = 'lease-1', publish = true, head: Partial<AppendHead> = {}, optional: string[] = []): (string | Buffer)[] {
  const last = events[events.length - 1]?.seq ?? 0;
  const fields: AppendHead = { maxlen: 1_000, state: 'TASK_STATE_WORKING', statusTime: 1_000, lastSeq: last, ttlMs: 0, publish, member: false, snapshot: false, answer: false, ...head };
  return [encodeAppend(fields, appendTaskPart(lease, CHANNEL), events), ...optional];
}

/** JSON with what the batch's framing must survive: spaces, escaped newlines, multi-byte characters. */
function event(seq: number, isToolFrame = false, terminal = false): TaskEvent {
  return new TaskEvent(seq, JSON.stringify({ seq, text: `line one\nline two — ${'é'.repeat(seq)} 🙂 "quoted"  two  spaces` }), isToolFrame, terminal);
}

describe('the append script, on a real Redis (e2e)', () => {
  let server: TestRedis;
  let redis: Redis;
  let subscriber: Redis;
  const append = (args: (string | Buffer)[]): Promise<number> => redis.evalsha(sha, 3, ...KEYS, ...args) as Promise<number>;
  let sha: string;

  beforeAll(async () => {
    server = await startRedis();
    redis = new Redis(server.url);
    subscriber = new Redis(server.url);
    sha = (await redis.script('LOAD', APPEND_SCRIPT)) as string;
  });
  afterAll(async () => {
    redis.disconnect();
    subscriber.disconnect();
    await server.stop();
  });
  beforeEach(async () => {
    await redis.flushall();
    await redis.hset('t:task', { lease: 'lease-1', lastSeq: '0' });
  });

  it('stores each event of the batch as it was (seq as the entry id, flags, JSON byte for byte), skips those already stored, and refuses another lease', async () => {
    const first = [event(1), event(2, true), event(3, true, true)];
    expect(await append(argv(first))).toBe(1);
    // A batch sent again after a lost reply, with one more event: only the new one is added.
    expect(await append(argv([...first, event(4, false, true)]))).toBe(1);
    expect(await append(argv([event(5)], 'another-lease'))).toBe(0);
    const entries = (await redis.xrange('t:events', '-', '+')) as [string, string[]][];
    expect(entries.map(([id, fields]) => [id, fields[1], fields[3]])).toEqual([
      ['1-1', '-', event(1).json],
      ['2-1', 't-', event(2).json],
      ['3-1', 'te-', event(3).json],
      ['4-1', 'e-', event(4).json],
    ]);
    expect(await redis.hget('t:task', 'lastSeq')).toBe('4');
    // The first batch once more (a reply lost long ago): the head still says 4, and so does its PUBLISH.
    const messages: string[] = [];
    await subscriber.subscribe(CHANNEL);
    subscriber.on('message', (_channel: string, message: string) => messages.push(message));
    expect(await append(argv(first))).toBe(1);
    expect(await redis.hget('t:task', 'lastSeq')).toBe('4');
    await subscriber.unsubscribe(CHANNEL);
    subscriber.removeAllListeners('message');
    expect(messages.map((message) => message.split('\n')[0])).toEqual(['4 TASK_STATE_WORKING']);
  });

  it('publishes the events to a subscriber of the channel, unless the writer says they are too large; the head line always', async () => {
    expect(await append(argv([event(1)]))).toBe(1);
    const messages: string[] = [];
    subscriber.on('message', (_channel: string, message: string) => messages.push(message));
    await subscriber.subscribe(CHANNEL);
    expect(await append(argv([event(2), event(3, true)]))).toBe(1);
    // Too large for the PUBLISH (the writer says so): followers read the stream.
    expect(await append(argv([event(4)], 'lease-1', false))).toBe(1);
    // Its reply comes after every message published before it, on the same connection.
    await subscriber.unsubscribe(CHANNEL);
    expect(messages).toEqual([`3 TASK_STATE_WORKING\n2 - ${event(2).json}\n3 t- ${event(3).json}`, '4 TASK_STATE_WORKING']);
  });

  it('publishes a batch of 4 kB or more without its events while no instance subscribes to the channel (a pattern subscriber does not count)', async () => {
    const watcher = new Redis(server.url);
    const messages: string[] = [];
    try {
      watcher.on('pmessage', (_pattern: string, _channel: string, message: string) => messages.push(message));
      await watcher.psubscribe('t:*');
      const large = Array.from({ length: 60 }, (_, i) => event(i + 1));
      expect(encodeAppend({ maxlen: 1, state: 'TASK_STATE_WORKING', statusTime: 1, lastSeq: 1, ttlMs: 0, publish: true, member: false, snapshot: false, answer: false }, appendTaskPart('', ''), large).length).toBeGreaterThan(4096 + 50);
      expect(await append(argv(large))).toBe(1);
      // A small batch carries its events whoever listens.
      expect(await append(argv([event(61)]))).toBe(1);
      // Its reply comes on the watcher's connection after every message published before it
      // (a fixed wait could end before a loaded machine delivered them).
      await watcher.punsubscribe('t:*');
    } finally {
      watcher.disconnect();
    }
    expect(messages).toEqual(['60 TASK_STATE_WORKING', `61 TASK_STATE_WORKING\n61 - ${event(61).json}`]);
    expect(await redis.xlen('t:events')).toBe(61);
  });

  it('trims the stream to the newest maxlen events, but never past the stored snapshot while it holds less than twice maxlen', async () => {
    // Events of 5 kB: each is a stream node of its own, so the approximate trim (~) is exact here.
    const large = (seq: number): TaskEvent => new TaskEvent(seq, JSON.stringify({ seq, page: 'x'.repeat(5_000) }));
    const batch = (from: number, to: number): TaskEvent[] => Array.from({ length: to - from + 1 }, (_, i) => large(from + i));
    const firstKept = async (): Promise<number> => Number(((await redis.xrange('t:events', '-', '+', 'COUNT', 1)) as [string, string[]][])[0][0].split('-')[0]);
    const maxlen = 10;
    // The snapshot at event 1, stored with it.
    expect(await append(argv(batch(1, 1), 'lease-1', false, { maxlen, snapshot: true }, ['{"id":"t"}']))).toBe(1);
    // 15 events after it, past maxlen: none is trimmed, a reader of the snapshot needs them all.
    expect(await append(argv(batch(2, 16), 'lease-1', false, { maxlen }))).toBe(1);
    expect([await firstKept(), await redis.xlen('t:events')]).toEqual([2, 15]);
    // Twice maxlen is the most it keeps, however old the snapshot.
    expect(await append(argv(batch(17, 30), 'lease-1', false, { maxlen }))).toBe(1);
    expect([await firstKept(), await redis.xlen('t:events')]).toEqual([11, 20]);
    // A call with a snapshot: the newest maxlen again.
    expect(await append(argv(batch(31, 31), 'lease-1', false, { maxlen, snapshot: true }, ['{"id":"t"}']))).toBe(1);
    expect([await firstKept(), await redis.xlen('t:events')]).toEqual([22, 10]);
    expect(await redis.hget('t:task', 'snapshotSeq')).toBe('31');
    // The snapshot less than maxlen behind: the newest maxlen.
    expect(await append(argv(batch(32, 36), 'lease-1', false, { maxlen }))).toBe(1);
    expect([await firstKept(), await redis.xlen('t:events')]).toEqual([27, 10]);
  });

  it('sends its XADD without MINID while the task has fewer than maxlen events (nothing to trim), with it from maxlen on', async () => {
    const monitor = await redis.monitor();
    const xadds: string[] = [];
    try {
      // MONITOR feeds the commands in the order Redis ran them: once it shows this PING, it showed the XADDs before it.
      const seenAll = new Promise<void>((resolve) =>
        monitor.on('monitor', (_time: string, args: string[]) => {
          const name = String(args[0]).toLowerCase();
          if (name === 'xadd') xadds.push(args.slice(1, 5).join(' '));
          if (name === 'ping' && args[1] === 'appended') resolve();
        }),
      );
      const maxlen = 3;
      expect(await append(argv([event(1), event(2)], 'lease-1', false, { maxlen }))).toBe(1);
      expect(await append(argv([event(3), event(4)], 'lease-1', false, { maxlen }))).toBe(1);
      await redis.ping('appended');
      await seenAll;
    } finally {
      monitor.disconnect();
    }
    expect(xadds).toEqual(['t:events 1-1 f -', 't:events 2-1 f -', 't:events MINID ~ 1', 't:events MINID ~ 1']);
    expect(await redis.xlen('t:events')).toBe(4);
  });

  it('stores only the head for an empty batch (a snapshot-only call)', async () => {
    expect(await append(argv([], 'lease-1', true, { snapshot: true }, ['{"id":"t"}']))).toBe(1);
    expect(await redis.xlen('t:events')).toBe(0);
    expect(await redis.hget('t:task', 'snapshot')).toBe('{"id":"t"}');
  });

  it('writes the owner index, the snapshot, the answer and the time to live only when the head says so', async () => {
    expect(await append(argv([event(1)]))).toBe(1);
    expect(await redis.hmget('t:task', 'state', 'statusTime', 'lastSeq', 'snapshot', 'snapshotSeq', 'answer')).toEqual(['TASK_STATE_WORKING', '1000', '1', null, null, null]);
    expect(await redis.zcard('t:owner')).toBe(0);
    expect(await redis.pttl('t:task')).toBe(-1);
    const head = { state: 'TASK_STATE_COMPLETED', statusTime: 2_000, ttlMs: 60_000, member: true, snapshot: true, answer: true };
    expect(await append(argv([event(2, false, true)], 'lease-1', true, head, ['t', '{"id":"t é"}', 'the answer — 4']))).toBe(1);
    expect(await redis.hmget('t:task', 'state', 'statusTime', 'lastSeq', 'snapshot', 'snapshotSeq', 'answer')).toEqual([
      'TASK_STATE_COMPLETED',
      '2000',
      '2',
      '{"id":"t é"}',
      '2',
      'the answer — 4',
    ]);
    expect(await redis.zscore('t:owner', 't')).toBe('2000');
    expect(await redis.pttl('t:task')).toBeGreaterThan(50_000);
    expect(await redis.pttl('t:events')).toBeGreaterThan(50_000);
    // Only the answer: the member and the snapshot are not there to be read in its place.
    expect(await append(argv([event(3)], 'lease-1', true, { answer: true }, ['another']))).toBe(1);
    expect(await redis.hmget('t:task', 'snapshot', 'answer')).toEqual(['{"id":"t é"}', 'another']);
  });

  it('is sent by its SHA1 as one command; on a Redis that lost it (NOSCRIPT) it loads once and the same call goes again', async () => {
    const script = new ShaScript(redis, APPEND_SCRIPT, 3);
    expect(await script.call(KEYS, argv([event(1)]))).toBe(1);
    await redis.script('FLUSH');
    const err = await script.call(KEYS, argv([event(2)])).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(String(err)).toContain('NOSCRIPT');
    // Loads for every caller that failed meanwhile at once (one SCRIPT LOAD).
    const loading = script.loaded(err);
    expect(script.loaded(err)).toBe(loading);
    await loading;
    expect(script.loaded(new Error('Connection is closed.'))).toBeUndefined();
    expect(await script.call(KEYS, argv([event(2)]))).toBe(1);
    expect(await redis.xlen('t:events')).toBe(2);
  });

  it("times its calls out at the connection's commandTimeout as ioredis does, each at its own deadline, with one timer for all those in flight", async () => {
    const timed = new Redis(server.url, { commandTimeout: 300 });
    const pauser = new Redis(server.url);
    try {
      const script = new ShaScript(timed, APPEND_SCRIPT, 3);
      expect(await script.call(KEYS, argv([event(1)]))).toBe(1);
      const pausedAt = performance.now();
      await pauser.client('PAUSE', 1_000, 'ALL');
      const outcome = (sentAt: number) => (reply: Promise<unknown>) =>
        reply.then(
          (value) => ({ value, afterMs: performance.now() - sentAt }),
          (err: unknown) => ({ value: String(err), afterMs: performance.now() - sentAt }),
        );
      const first = outcome(performance.now())(script.call(KEYS, argv([event(2)])));
      await new Promise((resolve) => setTimeout(resolve, 100));
      // ioredis arms a timer per command it sends (two here); the script's calls share one, armed already.
      const arming = jest.spyOn(global, 'setTimeout');
      const laterAt = performance.now();
      const later = [script.call(KEYS, argv([event(3)])), script.call(KEYS, argv([event(4)]))].map(outcome(laterAt));
      expect(arming).not.toHaveBeenCalled();
      arming.mockRestore();
      const settled = await Promise.all([first, ...later]);
      for (const { value, afterMs } of settled) {
        expect(value).toBe('Error: Command timed out');
        expect(afterMs).toBeGreaterThanOrEqual(295);
        expect(afterMs).toBeLessThan(600);
      }
      // Once Redis answers again (it runs the calls it held), a call is answered as before.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, pausedAt + 1_100 - performance.now())));
      expect(await script.call(KEYS, argv([event(5)]))).toBe(1);
      expect(await redis.xlen('t:events')).toBe(5);
    } finally {
      timed.disconnect();
      pauser.disconnect();
    }
  });
});
