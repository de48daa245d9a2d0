import { TaskState, taskStateToJSON } from '@a2a-js/sdk';
import type { TaskEvent } from '../task-event';
import type { TaskRecord } from '../task-record';
import { decimalDigits as digits, writeDecimal } from './redis-resp';
import { taskSnapshotBuffer } from './redis-snapshot-json';
import { emptiedForReuse } from './reused-list';

/**
 * Appends a batch of events if the caller still holds the task's lease, and updates the task's
 * head (and, when given, its snapshot and answer) in the same step; then tells followers on
 * other instances (PUBLISH the last seq and state, and the batch's events when it is small; from
 * 4 kB on, only while some instance subscribes to the channel: one that subscribes later reads
 * the head, then the stream). Events already stored (a batch sent again after a lost reply) are skipped, so a retry
 * never stores one twice. The stream keeps the newest `maxlen` events and every event after the
 * stored snapshot, at most twice `maxlen` (XADD MINID ~): a reader that takes the snapshot finds
 * every event after it. The keys' time to live and the owner index are written only when the
 * writer says they are due (not on every batch: each is one more command inside Redis).
 * KEYS: task hash, event stream, owner index. ARGV: the payload (see encodeAppend), then the
 * optional arguments the head names, in this order: `i` the owner index member, `s` the
 * snapshot, `a` the answer.
 * The payload, in one buffer: the head (maxlen, state, statusTime, lastSeq, time to live while
 * running or 0 when not due, 1 when the PUBLISH may carry the batch's events or 0 when too large
 * for it (followers read the stream), the optional arguments that follow or `-`, and the lease's
 * and the channel's lengths in bytes, each followed by one space), the lease and the channel
 * (the task's part, made once per task), then the batch: per event a newline, its seq, flags and
 * JSON, separated by one space, which is also how the PUBLISH carries them after its first line.
 * JSON text never holds a raw newline, and neither a seq nor the flags a space, so the first two
 * spaces after a newline end the seq and the flags.
 * One argument for all of it: ioredis writes a few strings per argument of each call (its RESP
 * header, a length), and a string argument once more, whole; about 0.5 kB of heap per call less
 * than the lease, head, channel and batch as four.
 */
export const APPEND_SCRIPT = `
local payload = ARGV[1]
local maxlen, state, statusTime, lastSeq, ttl, publish, extra, leaseBytes, channelBytes, from = string.match(payload, '^(%d+) (%S+) (%d+) (%d+) (%d+) (%d) (%S+) (%d+) (%d+) ()')
local channelAt = from + tonumber(leaseBytes)
local at = channelAt + tonumber(channelBytes)
local head = redis.call('HMGET', KEYS[1], 'lease', 'lastSeq', 'snapshotSeq')
if head[1] ~= string.sub(payload, from, channelAt - 1) then return 0 end
local channel = string.sub(payload, channelAt, at - 1)
local member, snapshot, answer
if extra ~= '-' then
  local optional = 2
  if string.find(extra, 'i', 1, true) then member = ARGV[optional]; optional = optional + 1 end
  if string.find(extra, 's', 1, true) then snapshot = ARGV[optional]; optional = optional + 1 end
  if string.find(extra, 'a', 1, true) then answer = ARGV[optional] end
end
local stored = tonumber(head[2] or '0') or 0
local size = #payload
local batchAt = at
-- The trim point: the newest maxlen events stay, and every event after the stored snapshot (this
-- call's, when it carries one), up to twice maxlen. The writer stores a new snapshot before the
-- one stored falls maxlen behind, so the stream holds more than maxlen only while a backlog too
-- long for one call goes out (see RedisTaskAppender.send). Below maxlen events it is 0: nothing
-- is trimmed, and the XADD goes without MINID (Redis turns a number argument into text, then
-- checks the trim: about 8,000 of its ~110,000 instructions per one-event call).
local newest = tonumber(lastSeq)
local cap = tonumber(maxlen)
local minid = 0
if newest >= cap then
  local snapshotSeq = snapshot and newest or (tonumber(head[3] or '0') or 0)
  minid = math.max(newest - 2 * cap + 1, math.min(snapshotSeq + 1, newest - cap + 1), 0)
end
while at < size do
  local a = string.find(payload, ' ', at + 1, true)
  local b = string.find(payload, ' ', a + 1, true)
  local e = string.find(payload, '\\n', b + 1, true) or (size + 1)
  local seq = string.sub(payload, at + 1, a - 1)
  if tonumber(seq) <= stored then
    -- Stored already (a batch sent again).
  elseif minid > 0 then
    redis.call('XADD', KEYS[2], 'MINID', '~', minid, seq .. '-1', 'f', string.sub(payload, a + 1, b - 1), 'j', string.sub(payload, b + 1, e - 1))
  else
    redis.call('XADD', KEYS[2], seq .. '-1', 'f', string.sub(payload, a + 1, b - 1), 'j', string.sub(payload, b + 1, e - 1))
  end
  at = e
end
-- The newest seq as the text it came in (a number made text again costs Redis a sprintf, twice per call).
local last = stored > newest and head[2] or lastSeq
if not snapshot and not answer then
  -- Most calls: no table of fields to make and unpack.
  redis.call('HSET', KEYS[1], 'state', state, 'statusTime', statusTime, 'lastSeq', last)
else
  local fields = {'state', state, 'statusTime', statusTime, 'lastSeq', last}
  if snapshot then
    fields[#fields + 1] = 'snapshot'
    fields[#fields + 1] = snapshot
    fields[#fields + 1] = 'snapshotSeq'
    fields[#fields + 1] = lastSeq
  end
  if answer then
    fields[#fields + 1] = 'answer'
    fields[#fields + 1] = answer
  end
  redis.call('HSET', KEYS[1], unpack(fields))
end
if ttl ~= '0' then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
if member then redis.call('ZADD', KEYS[3], statusTime, member) end
local batchSize = size - batchAt + 1
-- The message made in one concatenation (not its first line, then that and the batch: one string less).
if publish == '1' and batchSize > 0 and (batchSize < 4096 or redis.call('PUBSUB', 'NUMSUB', channel)[2] > 0) then
  redis.call('PUBLISH', channel, last .. ' ' .. state .. string.sub(payload, batchAt))
else
  redis.call('PUBLISH', channel, last .. ' ' .. state)
end
return 1
`;

/** What APPEND_SCRIPT's head says (every field but `state` a whole number). */
export interface AppendHead {
  maxlen: number;
  state: string;
  statusTime: number;
  lastSeq: number;
  /** 0: the keys' time to live is not renewed by this call. */
  ttlMs: number;
  /** The PUBLISH may carry the batch's events. */
  publish: boolean;
  /** The owner index member, the snapshot and the answer follow the payload (in this order) when set. */
  member: boolean;
  snapshot: boolean;
  answer: boolean;
}

/** The task's part of APPEND_SCRIPT's payload (the lease's and the channel's lengths, then the two), made once per task. */
export function appendTaskPart(lease: string, channel: string): Buffer {
  return Buffer.from(`${Buffer.byteLength(lease)} ${Buffer.byteLength(channel)} ${lease}${channel}`);
}

/**
 * The parts as buffers that share one allocation of their own. Small ones made by Buffer.from
 * are slices of Node's shared 8 KiB pool, and a slice kept for a task's life keeps its whole
 * pool slab alive: ~0.6 slab (~4.8 KB of native memory) per running task (bench/running-task-heap.ts).
 */
export function ownedBuffers(parts: readonly (string | Buffer)[]): Buffer[] {
  const lengths = parts.map((part) => (typeof part === 'string' ? Buffer.byteLength(part) : part.length));
  const all = Buffer.allocUnsafeSlow(lengths.reduce((sum, length) => sum + length, 0));
  let offset = 0;
  return parts.map((part, i) => {
    const start = offset;
    offset += typeof part === 'string' ? all.write(part, start) : part.copy(all, start);
    return all.subarray(start, start + lengths[i]);
  });
}

/**
 * APPEND_SCRIPT's payload in one buffer: the head, the task's part (see appendTaskPart) and the
 * batch, written straight from the numbers and each event's JSON (a tool frame's from its
 * pieces), with no string of a number, an event, the batch or the call made on the heap on the way.
 */
export function encodeAppend(head: AppendHead, taskPart: Buffer, batch: readonly TaskEvent[]): Buffer {
  let bytes = 7 + digits(head.maxlen) + head.state.length + digits(head.statusTime) + digits(head.lastSeq) + digits(head.ttlMs) + 1 + extraLength(head) + taskPart.length;
  for (const event of batch) bytes += 3 + digits(event.seq) + flagsOf(event).length + event.jsonBytes;
  const buffer = Buffer.allocUnsafe(bytes);
  let offset = writeDecimal(buffer, 0, head.maxlen);
  offset = buffer.writeUInt8(SPACE, offset);
  offset += buffer.write(head.state, offset, 'latin1');
  offset = buffer.writeUInt8(SPACE, offset);
  offset = writeDecimal(buffer, offset, head.statusTime);
  offset = buffer.writeUInt8(SPACE, offset);
  offset = writeDecimal(buffer, offset, head.lastSeq);
  offset = buffer.writeUInt8(SPACE, offset);
  offset = writeDecimal(buffer, offset, head.ttlMs);
  offset = buffer.writeUInt8(SPACE, offset);
  offset = buffer.writeUInt8(head.publish ? DIGIT_ONE : DIGIT_ZERO, offset);
  offset = buffer.writeUInt8(SPACE, offset);
  if (head.member) offset = buffer.writeUInt8(EXTRA_MEMBER, offset);
  if (head.snapshot) offset = buffer.writeUInt8(EXTRA_SNAPSHOT, offset);
  if (head.answer) offset = buffer.writeUInt8(EXTRA_ANSWER, offset);
  if (!head.member && !head.snapshot && !head.answer) offset = buffer.writeUInt8(EXTRA_NONE, offset);
  offset = buffer.writeUInt8(SPACE, offset);
  offset += taskPart.copy(buffer, offset);
  for (const event of batch) {
    offset = buffer.writeUInt8(NEWLINE, offset);
    offset = writeDecimal(buffer, offset, event.seq);
    offset = buffer.writeUInt8(SPACE, offset);
    offset += buffer.write(flagsOf(event), offset, 'latin1');
    offset = buffer.writeUInt8(SPACE, offset);
    offset = event.writeJson(buffer, offset);
  }
  return buffer;
}

const NEWLINE = 0x0a;
const SPACE = 0x20;
const DIGIT_ZERO = 0x30;
const DIGIT_ONE = 0x31;
const EXTRA_MEMBER = 0x69; // i
const EXTRA_SNAPSHOT = 0x73; // s
const EXTRA_ANSWER = 0x61; // a
const EXTRA_NONE = 0x2d; // -

function extraLength(head: AppendHead): number {
  return Number(head.member) + Number(head.snapshot) + Number(head.answer) || 1;
}

/** An event's flags as the script and the PUBLISH carry them ('t' a tool frame, 'e' the end). */
function flagsOf(event: TaskEvent): string {
  return event.isToolFrame ? (event.terminal ? 'te-' : 't-') : event.terminal ? 'e-' : '-';
}

/** The script call (KEYS and ARGV of APPEND_SCRIPT): resolves 1 when stored, 0 when another writer holds the lease. */
export type AppendCall = (keys: Buffer[], args: (string | Buffer)[]) => Promise<number>;

export interface AppenderOptions {
  lease: string;
  keys: [task: string, events: string, ownerIndex: string];
  channel: string;
  ownerMember: string;
  maxEventsPerTask: number;
  runningTtlMs: number;
  append: AppendCall;
  /** Something went wrong that the instance's log should say (once per outage, not per retry). */
  warn: (message: string) => void;
  /**
   * A call failed with `err`: when the failure says nothing about Redis being away (its script was
   * missing, after a restart: NOSCRIPT), a promise that resolves once the call can go again, which
   * it then does at once (no outage, no warning); otherwise undefined.
   */
  afterFailure?: (err: unknown) => Promise<unknown> | undefined;
  /** Too many events waited for an unreachable Redis: the task must end (failed) and its run stop. */
  onOverflow: (reason: string) => void;
  /** The newest seq already in Redis when the appender starts (a task taken over goes on from it). */
  storedSeq?: number;
  /** The seq of the snapshot Redis holds when the appender starts (a task taken over). */
  storedSnapshotSeq?: number;
  /**
   * A batch reached Redis: followers on this instance may have it now, and take its events as
   * they are (followers elsewhere get them from the PUBLISH, or read them when it was too large).
   */
  onStored?: (lastSeq: number, state: TaskState, events: TaskEvent[]) => void;
  /** Another writer holds the lease now: nothing this appender sends is stored any more. */
  onLeaseLost?: () => void;
  /**
   * Runs `send` once the current event-loop turn is done (default: setImmediate). A store runs
   * all its tasks' due sends from one callback, so that their script calls leave in one socket write.
   */
  defer?: (send: () => void) => void;
  /** The least time between two calls of a task writing fast (default MIN_CALL_GAP_MS). */
  minCallGapMs?: number;
  /**
   * Runs `send` once the gap has passed (default: a timer of its own). A store runs the sends
   * that wait for it from one timer, so that their script calls leave in one socket write.
   */
  later?: (send: () => void) => void;
}

function deferToImmediate(send: () => void): void {
  setImmediate(send);
}

function afterGap(send: () => void): void {
  setTimeout(send, MIN_CALL_GAP_MS);
}

/** Events per script call at most: a long backlog (after an outage) goes in several. */
const MAX_BATCH = 2_000;
/** A batch up to this size (JSON characters) goes in the PUBLISH too. */
const MAX_PUBLISHED_BYTES = 64 * 1024;
/** A snapshot is stored at least this often while events flow (and on every state change). */
const SNAPSHOT_EVERY_MS = 1_000;
/** The keys' time to live is renewed when this share of it has passed since the last renewal. */
const TTL_RENEW_SHARE = 1 / 8;
/**
 * A task that writes faster than this makes at most one call per this many ms: events that come
 * while the call before was on its way wait, up to this long, for the events of the next turns.
 * Against a Redis that answers in tens of µs, a run writing flat out would otherwise send a call
 * of two or three events per turn, and each call costs the instance and Redis about as much as
 * tens of events in it. A task that writes less often than this (a paced stream) never waits,
 * nor does a batch that changes the task's state or ends it.
 */
export const MIN_CALL_GAP_MS = 1;
/** Events that go out at once even within the gap (so that a batch does not grow without end). */
const HOLD_AT_MOST = 512;
const RETRY_FIRST_MS = 50;
const RETRY_MAX_MS = 2_000;

/** A batch this long or shorter is emptied in place for the next (see recycle); a longer one's array is let go. */
const SHORT_BATCH = 16;
const NO_ARGS: (string | Buffer)[] = [];

/** A call in flight: its arguments, and what the appender records once it is stored (its events are `sent`). */
interface InFlight {
  args: (string | Buffer)[];
  last: number;
  state: TaskState;
  statusTime: number;
  answer?: string;
  now: number;
  renewTtl: boolean;
  index: boolean;
  withSnapshot: boolean;
  /** Sent again already after afterFailure (a second such failure is an outage). */
  again: boolean;
}

/**
 * The writer side of one task in Redis: its events go out in order, one script call in flight
 * at a time, so each call carries everything that came while the previous one was on its way
 * (one round trip per batch, however fast the run writes), and for a run that writes flat out,
 * what came within MIN_CALL_GAP_MS of the call before. The snapshot, the largest thing a
 * task stores, goes only on a state change, at the end, or once a second while events flow:
 * readers take it with the seq it was made at and read the events after that from the stream.
 *
 * While Redis is unreachable, the events wait here, in order, and go out when it returns (no
 * gap, no duplicate: the script skips what is already stored). At most maxEventsPerTask wait
 * for an unreachable Redis: past that the task fails (onOverflow), and its last events still
 * wait for it. While Redis answers, the backlog is what the run wrote during one round trip.
 */
export class RedisTaskAppender {
  private pending: TaskEvent[] = [];
  /**
   * The events of the call in flight; empty between calls. It and `pending` trade places when a
   * call takes every pending event: splice(0) made a new array per call, and left `pending`
   * without a backing store, which its next push grew again (~0.2 kB of heap per call).
   */
  private sent: TaskEvent[] = [];
  private scheduled = false;
  private sending = false;
  private retry?: NodeJS.Timeout;
  /** The next call waits for MIN_CALL_GAP_MS to pass since the last one left (see holdsBack). */
  private held = false;
  private lastCallAt = Number.NEGATIVE_INFINITY;
  private retryMs = RETRY_FIRST_MS;
  private outage = false;
  private overflowed = false;
  private snapshotState?: TaskState;
  private snapshotAt = 0;
  /** The seq of the newest snapshot Redis holds (the script trims no event after it, see APPEND_SCRIPT). */
  private snapshotSeq: number;
  /** The last batch left its periodic snapshot to the next call (see send). */
  private snapshotOwed = false;
  private eventsSinceSnapshot = 0;
  private ttlRenewedAt = Number.NEGATIVE_INFINITY;
  private indexedStatusTime?: number;
  private storedAnswer?: string;
  private leaseLost = false;
  private readonly waiters: (() => void)[] = [];
  /**
   * The call in flight: what its reply needs (see onReply), one object for every call, as its head
   * is (a new one each per call was ~0.2 kB of heap); meaningful while `sending`.
   */
  private readonly flight: InFlight = { args: NO_ARGS, last: 0, state: TaskState.TASK_STATE_UNSPECIFIED, statusTime: 0, now: 0, renewTtl: false, index: false, withSnapshot: false, again: false };
  private readonly head: AppendHead;
  /** The newest seq Redis holds from this writer (or from before it, see AppenderOptions.storedSeq). */
  storedSeq: number;
  /** The task's state as of the newest stored batch (undefined until one is stored). */
  storedState?: TaskState;

  /** The task, set right after it is made (it appends its first event while being made). */
  record!: TaskRecord;
  /** The call's fixed parts, as buffers (see APPEND_SCRIPT). */
  private readonly keys: Buffer[];
  private readonly taskPart: Buffer;
  private readonly ownerMember: Buffer;

  constructor(private readonly options: AppenderOptions) {
    this.storedSeq = options.storedSeq ?? 0;
    this.snapshotSeq = options.storedSnapshotSeq ?? 0;
    [this.taskPart, this.ownerMember, ...this.keys] = ownedBuffers([appendTaskPart(options.lease, options.channel), options.ownerMember, ...options.keys]);
    this.head = { maxlen: options.maxEventsPerTask, state: '', statusTime: 0, lastSeq: 0, ttlMs: 0, publish: false, member: false, snapshot: false, answer: false };
  }

  /** Whether another writer took the lease over (this one's batches are refused). */
  get lost(): boolean {
    return this.leaseLost;
  }

  /** Events not yet stored. */
  get backlog(): number {
    return this.pending.length;
  }

  enqueue(event: TaskEvent): void {
    this.pending.push(event);
    this.checkOverflow();
    this.schedule();
  }

  /**
   * Past maxEventsPerTask waiting while Redis is unreachable (the last call failed), the task
   * must end. A backlog that only built up during one healthy round trip (a run writing faster
   * than a call returns) is no outage: it goes out with the next call.
   */
  private checkOverflow(): void {
    if (!this.outage || this.pending.length <= this.options.maxEventsPerTask || this.overflowed || this.record.isTerminal) return;
    this.overflowed = true;
    // Not from inside the record's own append (enqueue runs in its onEvent).
    queueMicrotask(() =>
      this.options.onOverflow(`the task store (Redis) was unreachable while the run wrote ${this.pending.length} events, more than maxEventsPerTask (${this.options.maxEventsPerTask}) can wait for it`),
    );
  }

  /** Resolves once every event enqueued so far is stored (or at once when none waits). */
  drained(): Promise<void> {
    if (this.pending.length === 0 && !this.sending) return Promise.resolve();
    if (this.retry) {
      // Try now rather than at the end of the backoff.
      clearTimeout(this.retry);
      this.retry = undefined;
      this.schedule();
    }
    if (this.held) {
      // Someone waits for these events: no more waiting for the gap.
      this.held = false;
      this.send(true);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Stops retrying; what was not stored stays unstored. */
  stop(): number {
    this.scheduled = false;
    this.held = false;
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    for (const resolve of this.waiters.splice(0)) resolve();
    return this.pending.length;
  }

  private schedule(): void {
    if (this.scheduled || this.sending || this.retry || this.held) return;
    this.scheduled = true;
    (this.options.defer ?? deferToImmediate)(this.sendScheduled);
  }

  /** One function for every schedule (not a closure per batch). */
  private readonly sendScheduled = (): void => {
    // Stopped meanwhile: nothing goes out.
    if (!this.scheduled) return;
    this.scheduled = false;
    this.send();
  };

  /**
   * Sends the next call, if one is due. Not an async function, and what the reply needs is kept in
   * fields (one call in flight at a time): an async send with an await made a promise, a
   * generator and a context holding every local per call, about 0.4 kB of heap per call more.
   * @param waited it waited for the gap already (see holdsBack)
   */
  private send(waited = false): void {
    if (this.sending || (this.pending.length === 0 && !this.snapshotOwed)) {
      if (!this.sending) this.settle();
      return;
    }
    if (!waited && this.holdsBack()) {
      this.held = true;
      (this.options.later ?? afterGap)(this.sendAfterGap);
      return;
    }
    this.sending = true;
    let batch: TaskEvent[];
    if (this.pending.length <= MAX_BATCH) {
      // `sent` is empty between calls: the two trade places.
      batch = this.pending;
      this.pending = this.sent;
    } else batch = this.pending.splice(0, MAX_BATCH);
    this.sent = batch;
    const task = this.record;
    // An empty batch: the call stores only the snapshot that the last batch left for it (see below).
    const last = batch.length > 0 ? batch[batch.length - 1].seq : this.storedSeq;
    // A batch that leaves the stored snapshot maxEventsPerTask behind carries a new one: Redis keeps
    // the newest maxEventsPerTask events and every event after the snapshot (see APPEND_SCRIPT),
    // so without it the stream would grow past the cap (up to twice it).
    const behind = last - this.snapshotSeq >= this.options.maxEventsPerTask;
    // The snapshot describes the task at its newest event: only a batch that ends there can carry it.
    const due = this.pending.length === 0 && last === task.lastSeq && (behind || this.snapshotDue(task, batch.length));
    // A state change (and the end) carries its snapshot: readers take the two together. A periodic
    // one (tens of kB) goes in a call of its own right after this batch's, so that the frames of
    // the batch do not wait for it to be built and stored; it rides along only when events keep
    // coming (a run writing flat out: there is never a moment without a batch), or when the batch
    // alone would leave the stored one behind the cap.
    const apart = due && !behind && batch.length > 0 && !this.snapshotOwed && !task.isTerminal && task.state === this.snapshotState;
    const withSnapshot = due && !apart;
    this.snapshotOwed = apart;
    if (batch.length === 0 && !withSnapshot) {
      // `sent` is the empty array that was pending.
      this.sending = false;
      this.settle();
      return;
    }
    const state = task.state;
    const statusTime = task.statusTime;
    const answer = task.answerText;
    const now = Date.now();
    // The keys' expiry, the owner index and the answer go only when due or changed (see APPEND_SCRIPT).
    const renewTtl = now - this.ttlRenewedAt >= this.options.runningTtlMs * TTL_RENEW_SHARE;
    const index = statusTime !== this.indexedStatusTime;
    let bytes = 0;
    for (const event of batch) bytes += event.weight;
    const snapshot = withSnapshot ? taskSnapshotBuffer(task.snapshot({ includeArtifacts: false }), task.snapshotArtifacts()) : undefined;
    // An empty answer is not stored (as before any answer: the conversation skips the turn).
    const newAnswer = answer !== undefined && answer !== '' && answer !== this.storedAnswer ? answer : undefined;
    const head = this.head;
    head.state = taskStateToJSON(state);
    head.statusTime = statusTime;
    head.lastSeq = last;
    head.ttlMs = renewTtl ? this.options.runningTtlMs : 0;
    // Followers elsewhere take a small batch from the PUBLISH itself (no XRANGE); a large one they read.
    head.publish = bytes <= MAX_PUBLISHED_BYTES;
    head.member = index;
    head.snapshot = snapshot !== undefined;
    head.answer = newAnswer !== undefined;
    const args: (string | Buffer)[] = [encodeAppend(head, this.taskPart, batch)];
    if (index) args.push(this.ownerMember);
    if (snapshot) args.push(snapshot);
    if (newAnswer !== undefined) args.push(newAnswer);
    const call = this.flight;
    call.args = args;
    call.last = last;
    call.state = state;
    call.statusTime = statusTime;
    call.answer = answer;
    call.now = now;
    call.renewTtl = renewTtl;
    call.index = index;
    call.withSnapshot = withSnapshot;
    call.again = false;
    this.lastCallAt = performance.now();
    this.options.append(this.keys, args).then(this.onReply, this.onFailure);
  }

  private readonly sendAfterGap = (): void => {
    // Sent meanwhile (drained) or stopped.
    if (!this.held) return;
    this.held = false;
    this.send(true);
  };

  /** The call in flight answered: `held` 1 when stored, 0 when another writer holds the lease. */
  private readonly onReply = (held: number): void => {
    const { last, state, statusTime, answer, now, renewTtl, index, withSnapshot } = this.flight;
    const batch = this.sent;
    this.endCall();
    if (this.outage) this.options.warn(`task ${this.record.id}: Redis is back; the events that waited for it are being stored`);
    this.outage = false;
    this.retryMs = RETRY_FIRST_MS;
    if (held !== 1) {
      if (!this.leaseLost) this.options.warn(`task ${this.record.id}: the lease is held by another writer; ${batch.length} event(s) were not stored`);
      this.leaseLost = true;
      this.options.onLeaseLost?.();
    } else {
      if (renewTtl) this.ttlRenewedAt = now;
      if (index) this.indexedStatusTime = statusTime;
      if (answer !== undefined) this.storedAnswer = answer;
      if (withSnapshot) {
        // A state change's snapshot puts the periodic ones that follow at a random point of the
        // period: tasks that began together (a burst of requests) would otherwise build and
        // store theirs (tens of kB each) within the same few ms, every second, and at their end.
        this.snapshotAt = state !== this.snapshotState ? now - Math.random() * SNAPSHOT_EVERY_MS : now;
        this.snapshotState = state;
        this.snapshotSeq = last;
        this.eventsSinceSnapshot = 0;
      } else this.eventsSinceSnapshot += batch.length;
      if (last > this.storedSeq) this.storedSeq = last;
      this.storedState = state;
      if (batch.length > 0) this.options.onStored?.(this.storedSeq, state, batch);
    }
    this.recycle();
    this.sending = false;
    if (this.pending.length > 0 || this.snapshotOwed) this.send();
    else this.settle();
  };

  /** The call in flight failed: sent again once it can go (see afterFailure), or its events wait, in order, for Redis to return. */
  private readonly onFailure = (err: unknown): void => {
    const call = this.flight;
    const loaded = call.again ? undefined : this.options.afterFailure?.(err);
    if (loaded) {
      // Nothing was stored (the script did not run): the same call goes again, once.
      call.again = true;
      loaded.then(this.sendAgain, this.onFailure);
      return;
    }
    this.endCall();
    const batch = this.sent;
    this.pending.unshift(...batch);
    this.recycle();
    this.sending = false;
    this.retryAfterOutage(err);
  };

  /** The call in flight is over: what it held (its arguments, tens of kB with a snapshot) is let go. */
  private endCall(): void {
    this.flight.args = NO_ARGS;
    this.flight.answer = undefined;
  }

  /**
   * Empties the call's events once it is over (onStored took them as they were: no one keeps the
   * array), for the next call to take (see `sent`): emptied in place while short, so its backing
   * store serves again; a long one (a backlog) is let go.
   */
  private recycle(): void {
    this.sent = emptiedForReuse(this.sent, SHORT_BATCH);
  }

  private readonly sendAgain = (): void => {
    this.options.append(this.keys, this.flight.args).then(this.onReply, this.onFailure);
  };

  /** Tried again after a pause that grows while Redis stays away. */
  private retryAfterOutage(err: unknown): void {
    const task = this.record;
    if (!this.outage) this.options.warn(`task ${task.id}: storing events in Redis failed (${err instanceof Error ? err.message : String(err)}); they wait and go out when it returns`);
    this.outage = true;
    this.checkOverflow();
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.send();
    }, this.retryMs);
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
  }

  /**
   * Whether the next call waits for MIN_CALL_GAP_MS to pass since the last one left: only while
   * the task writes that fast, its state is the one stored, nobody waits for the events
   * (drained), and the backlog is small.
   */
  private holdsBack(): boolean {
    const task = this.record;
    return (
      this.waiters.length === 0 &&
      !task.isTerminal &&
      task.state === this.storedState &&
      this.pending.length < HOLD_AT_MOST &&
      performance.now() - this.lastCallAt < (this.options.minCallGapMs ?? MIN_CALL_GAP_MS)
    );
  }

  private snapshotDue(task: TaskRecord, batchSize: number): boolean {
    return (
      task.isTerminal ||
      task.state !== this.snapshotState ||
      Date.now() - this.snapshotAt >= SNAPSHOT_EVERY_MS ||
      this.eventsSinceSnapshot + batchSize >= this.options.maxEventsPerTask / 4
    );
  }

  private settle(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}
