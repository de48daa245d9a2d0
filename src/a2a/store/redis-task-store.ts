import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Logger } from '@nestjs/common';
import { StreamResponse, Task, TaskState, taskStateFromJSON, taskStateToJSON, type Artifact, type Task as TaskType } from '@a2a-js/sdk';
import type Redis from 'ioredis';
import { invalidParams, isKnownError, serviceUnavailable } from '../a2a-errors';
import { TaskEvent } from '../task-event';
import { isTerminalState, TaskRecord, type CallerId, type SnapshotOptions, type TaskListener } from '../task-record';
import { APPEND_SCRIPT, RedisTaskAppender } from './redis-task-appender';
import { RedisRetention } from './redis-retention';
import { defineScript, inSlices, ShaScript, type ScriptCall } from './redis-scripts';
import { RedisTurnWrites } from './redis-turn-writes';
import { emptiedForReuse } from './reused-list';
import { CREATE_QUEUED_SCRIPT, EXPIRED_LEASES_SCRIPT, RENEW_LEASES_SCRIPT, TAKE_OVER_SCRIPT } from './run-queue-scripts';
import { TaskStore, type Conversation, type ListTasksQuery, type NewTask, type TaskPage, type TaskView, type WrittenTask } from './task-store';

export interface RedisTaskStoreOptions {
  /** The connection for commands; the store duplicates it once for its subscriptions. */
  redis: Redis;
  /** Prefix of every key and channel (default `toolstream:`). */
  keyPrefix?: string;
  maxEventsPerTask: number;
  maxFinishedToolsPerTask: number;
  /**
   * How long a running task's keys live in Redis without an append (default 24 h): the keys of a
   * task whose instance died go away on their own. A finished task's keys live taskTtlMs.
   */
  runningTtlMs?: number;
  /** Close `redis` with the store (it was opened for it). */
  ownsConnection?: boolean;
  /** Finished tasks kept in Redis, for all instances (unset: only taskTtlMs bounds them); see RedisRetention. */
  maxRetainedTasks?: number;
  /** Bytes (Redis MEMORY USAGE) the finished tasks may hold in Redis, for all instances. */
  maxRetainedBytes?: number;
}

/** How long a follower count outlives its last change (a dead instance's count goes away). */
const FOLLOWER_COUNT_TTL_MS = 10 * 60_000;

const DEFAULT_RUNNING_TTL_MS = 24 * 60 * 60_000;

/** Moves a message claim to another task while it still names `stale`. KEYS: the claim. ARGV: stale id, new id, ttl ms. */
const REPLACE_CLAIM_SCRIPT = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3]) and 1 end return 0";

/** Deletes a message claim while it still names the task. KEYS: the claim. ARGV: task id. */
const RELEASE_CLAIM_SCRIPT = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";

/** KEYS: the follower count. ARGV: delta, time to live. One command where MULTI/INCRBY/PEXPIRE/EXEC were four. */
const COUNT_FOLLOWER_SCRIPT = `
local n = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return n
`;

/** KEYS: the run leases, then every key to expire. ARGV: time to live, task id. A finished task's retention in one command. */
const EXPIRE_TASK_SCRIPT = `
redis.call('ZREM', KEYS[1], ARGV[2])
for i = 2, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[1]) end
return 1
`;

/** Which process runs a task it took from the run queue (the task hash's `runner` field: host and pid). */
const RUNNER = `${hostname()}:${process.pid}`;

/** How long close waits for events still on their way to Redis (it may be down). */
const CLOSE_WAIT_MS = 5_000;

/** After the subscriber reconnects, followed heads are read again at once and after this pause. */
const CATCH_UP_AGAIN_MS = 500;

/** Events a follower reads per XRANGE. */
const READ_BATCH = 512;

/** A tail this short is emptied in place (see dropTailHead). */
const SHORT_TAIL = 16;

/** Published events a follower keeps (so that a follower a little behind still needs no XRANGE). */
const TAIL_EVENTS = 512;
/** …and at most this many JSON characters of them (frames can be large: a listener past it reads the stream). */
const TAIL_CHARS = 1024 * 1024;

/**
 * Events a writer's record keeps in its log: the newest only. Every stream follows a task
 * through a replica, also on the instance that writes it (getTask): there the replica is handed
 * each batch once Redis stored it and keeps the events its slowest stream still needs (see
 * RedisTaskReplica.keepTail), and the appender holds those not yet stored. Events kept by the
 * record for the task's whole run outlived the young generation's collections, which copied and
 * then promoted them (docs/deploying.md, "What a paced frame waits for").
 */
const WRITER_LOG_EVENTS = 1;

/** A task this instance writes. */
interface Written {
  record: TaskRecord;
  lease: string;
  appender: RedisTaskAppender;
  /**
   * Replicas on this instance that follow it (every stream here follows one): handed each batch
   * by the appender once it is stored, not through the PUBLISH (this instance does not subscribe
   * to its own tasks' channels while it holds their lease); older events they read from the stream.
   */
  local: Set<RedisTaskReplica>;
  /** Readers waiting for Redis to hold the events up to a seq (see storedThrough). */
  waiting: Set<StoredWaiter>;
}

interface StoredWaiter {
  seq: number;
  /** true: stored; false: this instance no longer writes the task. */
  done(stored: boolean): void;
}

/** How long a reader on the writing instance waits for the task's newest events to be stored (Redis answering, one round trip). */
const STORED_WAIT_MS = 2_000;

interface Head {
  id: string;
  contextId: string;
  owner: CallerId;
  state: TaskState;
  statusTime: number;
  lastSeq: number;
  /** The newest stored event (the snapshot, at lastSeq, may be older). */
  newestSeq: number;
  firstSeq: number;
  snapshot: TaskType;
}

/**
 * The shared task store on Redis. Per task: a hash (head, bounded snapshot, writer's lease), a
 * Redis Stream of its events whose entry ids are `<seq>-1` (so the SSE id is the stream id and a
 * resume is one XRANGE), a per-owner sorted set by status time (ListTasks) and a per-owner list
 * per conversation. The writer appends in batches, one script call per event-loop turn, which
 * checks its lease atomically; readers on any instance follow a task through a PUBLISH per batch.
 */
export class RedisTaskStore extends TaskStore {
  private readonly logger = new Logger(RedisTaskStore.name);
  private readonly prefix: string;
  /** Message claims (see claimMessage) of the tasks this instance created, to expire with them. */
  private readonly claims = new Map<string, string>();
  private readonly subscriber: Redis;
  /** Tasks written here (until they expire here), by id. */
  private readonly written = new Map<string, Written>();
  /** Followed replicas by channel. */
  private readonly watchers = new Map<string, Set<RedisTaskReplica>>();
  /** Expiries on their way to Redis (close waits for them). */
  private readonly pendingWork = new Set<Promise<void>>();
  private cancelHandler?: (id: string, reason: string) => void;
  private writeFailureHandler?: (id: string, reason: string) => void;
  /** Channel subscriptions by channel, resolved once in effect. */
  private readonly subscribed = new Map<string, Promise<void>>();
  /** Tasks this instance runs from the run queue under a lease it renews (see RedisRunQueue). */
  private readonly runLeases = new Set<string>();
  /**
   * Runs this worker is taking (expectCancel .. cancelReason): a cancel requested meanwhile, by
   * its flag read in the take-over step or by its PUBLISH, is kept here for the run to read once
   * it is registered (a PUBLISH before that reached no one).
   */
  private readonly taking = new Map<string, string | undefined>();
  /** The caps on finished tasks (count and bytes), shared by every instance. */
  readonly retention?: RedisRetention;
  /**
   * The appenders' script calls of one turn leave in one write, and so do the calls of a task's
   * start and end (claim, queueing, take-over, follower count, expiry): tasks that start or end
   * together send them together, where each was a socket write of its own (tens of µs each).
   */
  private readonly turnWrites: RedisTurnWrites;
  /** The same for the subscriber's SUBSCRIBE and UNSUBSCRIBE. */
  private readonly subscriberWrites: RedisTurnWrites;
  /** The append script's calls (one per batch), by its SHA1. */
  private readonly appendScript: ShaScript;
  /** The store's scripts, called by SHA1 (see defineScript). */
  private readonly scripts: Record<'replaceClaim' | 'releaseClaim' | 'createQueued' | 'takeOver' | 'renewLeases' | 'expiredLeases' | 'countFollower' | 'expireTask', ScriptCall>;

  constructor(private readonly options: RedisTaskStoreOptions) {
    super();
    this.prefix = options.keyPrefix ?? 'toolstream:';
    const { maxRetainedTasks, maxRetainedBytes } = options;
    if (maxRetainedTasks !== undefined && maxRetainedBytes !== undefined) {
      this.retention = new RedisRetention({ redis: options.redis, prefix: this.prefix, maxRetainedTasks, maxRetainedBytes });
    }
    this.turnWrites = new RedisTurnWrites(options.redis);
    const { redis } = options;
    this.scripts = {
      replaceClaim: defineScript(redis, REPLACE_CLAIM_SCRIPT),
      releaseClaim: defineScript(redis, RELEASE_CLAIM_SCRIPT),
      createQueued: defineScript(redis, CREATE_QUEUED_SCRIPT),
      takeOver: defineScript(redis, TAKE_OVER_SCRIPT),
      renewLeases: defineScript(redis, RENEW_LEASES_SCRIPT),
      expiredLeases: defineScript(redis, EXPIRED_LEASES_SCRIPT),
      countFollower: defineScript(redis, COUNT_FOLLOWER_SCRIPT),
      expireTask: defineScript(redis, EXPIRE_TASK_SCRIPT),
    };
    this.appendScript = new ShaScript(options.redis, APPEND_SCRIPT, 3);
    this.subscriber = options.redis.duplicate();
    this.subscriberWrites = new RedisTurnWrites(this.subscriber);
    this.subscriber.on('error', (err: Error) => this.logger.warn(`Redis subscriber: ${err.message}`));
    this.subscriber.on('message', (channel: string, message: string) => this.notify(channel, message));
    let connectedBefore = false;
    this.subscriber.on('ready', () => {
      if (connectedBefore) this.catchUp();
      connectedBefore = true;
    });
    this.subscriber.subscribe(this.key('channel', 'cancel')).catch((err: unknown) => this.logger.warn(`subscribing to cancel requests failed: ${String(err)}`));
  }

  async requestCancel(id: string, reason: string): Promise<void> {
    await unavailableIfDown(() => this.redis.publish(this.key('channel', 'cancel'), JSON.stringify({ id, reason })));
  }

  onCancelRequest(handler: (id: string, reason: string) => void): void {
    this.cancelHandler = handler;
  }

  override onWriteFailure(handler: (id: string, reason: string) => void): void {
    this.writeFailureHandler = handler;
  }

  async followersElsewhere(id: string): Promise<number> {
    return Number((await this.redis.get(this.key('followers', id))) ?? 0);
  }

  /** A replica's stream began (+1) or ended (-1): counted in Redis for the task's writer. */
  countFollower(id: string, delta: 1 | -1): void {
    const key = this.key('followers', id);
    this.turnWrites.cork();
    // Expires: an instance that dies holding a count must not keep a task alive past its grace forever.
    this.scripts.countFollower(1, key, delta, FOLLOWER_COUNT_TTL_MS).catch(() => undefined);
  }

  /** Events a task's log keeps (a follower further behind restarts from a snapshot, or is dropped). */
  get maxEventsPerTask(): number {
    return this.options.maxEventsPerTask;
  }

  get redis(): Redis {
    return this.options.redis;
  }

  key(kind: 'task' | 'events' | 'owner' | 'context' | 'channel' | 'followers' | 'message' | 'runs' | 'leases' | 'live' | 'finished', ...parts: string[]): string {
    return `${this.prefix}${kind}:${parts.join(':')}`;
  }

  create(init: NewTask): Promise<WrittenTask> {
    return unavailableIfDown(() => this.createTask(init));
  }

  get(id: string): Promise<TaskView | undefined> {
    return unavailableIfDown(() => this.getTask(id));
  }

  list(owner: CallerId, query: ListTasksQuery): Promise<TaskPage> {
    return unavailableIfDown(() => this.listTasks(owner, query));
  }

  conversation(contextId: string, owner: CallerId): Promise<Conversation> {
    return unavailableIfDown(() => this.readConversation(contextId, owner));
  }

  /** SET NX with the running task's TTL; `expire` shortens it to the task's retention. */
  claimMessage(owner: CallerId, messageId: string, taskId: string): Promise<string | undefined> {
    return unavailableIfDown(async () => {
      const key = this.key('message', ownerKey(owner), createHash('sha256').update(messageId).digest('hex'));
      this.turnWrites.cork();
      const set = await this.redis.set(key, taskId, 'PX', this.options.runningTtlMs ?? DEFAULT_RUNNING_TTL_MS, 'NX');
      if (set === 'OK') {
        this.claims.set(taskId, key);
        return undefined;
      }
      return (await this.redis.get(key)) ?? undefined;
    });
  }

  override replaceMessageClaim(owner: CallerId, messageId: string, stale: string, taskId: string): Promise<boolean> {
    return unavailableIfDown(async () => {
      const key = this.key('message', ownerKey(owner), createHash('sha256').update(messageId).digest('hex'));
      const ttl = this.options.runningTtlMs ?? DEFAULT_RUNNING_TTL_MS;
      this.turnWrites.cork();
      const moved = await this.scripts.replaceClaim(1, key, stale, taskId, ttl);
      if (moved !== 1) return false;
      this.claims.set(taskId, key);
      return true;
    });
  }

  releaseMessage(owner: CallerId, messageId: string, taskId: string): void {
    const key = this.claims.get(taskId);
    if (!key) return;
    this.claims.delete(taskId);
    this.turnWrites.cork();
    // Deleted only while it is still this task's claim.
    this.scripts
      .releaseClaim(1, key, taskId)
      .catch((err: unknown) => this.logger.warn(`releasing the claim of message ${messageId} failed: ${String(err)}`));
  }

  private async createTask(init: NewTask): Promise<WrittenTask> {
    const lease = randomUUID();
    const owner = ownerKey(init.owner);
    const statusTime = Date.now();
    await this.redis
      .multi()
      .hset(this.key('task', init.id), {
        id: init.id,
        contextId: init.contextId,
        owner,
        userText: init.text,
        lease,
        state: taskStateToJSON(TaskState.TASK_STATE_SUBMITTED),
        statusTime: String(statusTime),
        lastSeq: '0',
      })
      .pexpire(this.key('task', init.id), this.options.runningTtlMs ?? DEFAULT_RUNNING_TTL_MS)
      .zadd(this.key('owner', owner), statusTime, init.id)
      .rpush(this.key('context', owner, init.contextId), init.id)
      .exec();
    return this.register(init.id, owner, lease, { seq: 0, snapshotSeq: 0 }, (onEvent) =>
      new TaskRecord({ ...init, maxEvents: WRITER_LOG_EVENTS, maxFinishedTools: this.options.maxFinishedToolsPerTask, onEvent, packWhenSettled: false }),
    );
  }

  /** Makes this instance the task's writer under `lease`: its record's events go to Redis through an appender. */
  private register(
    id: string,
    owner: string,
    lease: string,
    stored: { seq: number; snapshotSeq: number },
    makeRecord: (onEvent: (event: TaskEvent) => void) => TaskRecord,
  ): TaskRecord {
    const local = new Set<RedisTaskReplica>();
    const waiting = new Set<StoredWaiter>();
    const appender = new RedisTaskAppender({
      lease,
      keys: [this.key('task', id), this.key('events', id), this.key('owner', owner)],
      channel: this.key('channel', id),
      ownerMember: id,
      maxEventsPerTask: this.options.maxEventsPerTask,
      runningTtlMs: this.options.runningTtlMs ?? DEFAULT_RUNNING_TTL_MS,
      append: (keys, args) => {
        this.turnWrites.cork();
        return this.appendScript.call(keys, args) as Promise<number>;
      },
      afterFailure: (err) => this.appendScript.loaded(err),
      defer: (send) => this.turnWrites.defer(send),
      later: (send) => this.turnWrites.later(send),
      warn: (message) => this.logger.warn(message),
      onOverflow: (reason) => (this.writeFailureHandler ? this.writeFailureHandler(id, reason) : record.fail(reason)),
      storedSeq: stored.seq,
      storedSnapshotSeq: stored.snapshotSeq,
      onStored: (seq, state, events) => {
        for (const replica of local) replica.advance(seq, state, events);
        for (const waiter of waiting) if (waiter.seq <= seq) waiter.done(true);
      },
      onLeaseLost: () => this.followThroughRedis(entry),
    });
    const record = makeRecord((event) => appender.enqueue(event));
    appender.record = record;
    const entry: Written = { record, lease, appender, local, waiting };
    this.written.set(id, entry);
    // Replicas that began following before this instance took the task (a queued run) follow it here from now on.
    const channel = this.key('channel', id);
    const watching = this.watchers.get(channel);
    if (watching) {
      this.watchers.delete(channel);
      this.subscribed.delete(channel);
      this.subscriberWrites.cork();
      this.subscriber.unsubscribe(channel).catch(() => undefined);
      for (const replica of watching) this.watchLocally(replica, entry);
    }
    return record;
  }

  /**
   * The writer here lost the task (its lease, or the task expired here: call it once `writing`
   * no longer returns the entry): its replicas follow the task through Redis again.
   */
  private followThroughRedis(entry: Written): void {
    for (const waiter of entry.waiting) waiter.done(false);
    const replicas = [...entry.local];
    entry.local.clear();
    for (const replica of replicas) {
      replica.fedHere = false;
      this.watch(replica);
    }
  }

  /** A replica of a task written here: its stored events come from the appender. */
  private watchLocally(replica: RedisTaskReplica, entry: Written): void {
    if (entry.local.has(replica)) return;
    entry.local.add(replica);
    replica.fedHere = true;
    // What was stored before it was told of it (or before this instance took the task over).
    const { storedSeq, storedState } = entry.appender;
    queueMicrotask(() => {
      if (entry.local.has(replica)) replica.advance(storedSeq, storedState ?? replica.state);
    });
  }

  /** The writer's entry while this instance holds the task's lease. */
  private writing(id: string): Written | undefined {
    const entry = this.written.get(id);
    return entry && !entry.appender.lost ? entry : undefined;
  }

  /** A task this instance writes, as it is now (tests, metrics). */
  record(id: string): TaskRecord | undefined {
    return this.written.get(id)?.record;
  }

  /**
   * A task written here, as a reader sees it (GetTask, SubscribeToTask): its state and snapshot
   * as the record holds them now, handed out once Redis holds every event up to it, and its
   * events as Redis holds them, fed here by the appender (see watch). Not the record itself: its
   * followers got each event as it was written, before Redis stored it, so a client resuming on
   * another instance, or after this one died, could find less than it had seen (and the run's
   * next owner numbers its next event after the newest stored one); and a stream here that
   * follows a replica is counted as a follower, as on any other instance (cancelOnDisconnect).
   */
  private async localReplica(entry: Written): Promise<RedisTaskReplica | undefined> {
    const { record } = entry;
    const lastSeq = record.lastSeq;
    const head: Head = {
      id: record.id,
      contextId: record.contextId,
      owner: record.owner,
      state: record.state,
      statusTime: record.statusTime,
      lastSeq,
      newestSeq: lastSeq,
      // Redis keeps at least the newest maxEventsPerTask of them (see APPEND_SCRIPT).
      firstSeq: Math.max(1, lastSeq - this.options.maxEventsPerTask + 1),
      snapshot: record.snapshot(),
    };
    return (await this.storedThrough(entry, lastSeq)) ? new RedisTaskReplica(this, head) : undefined;
  }

  /**
   * Resolves true once Redis holds the task's events up to `seq`, false if this instance stops
   * writing the task first; fails after STORED_WAIT_MS with a 503 that says Redis is unreachable or slow.
   */
  private storedThrough(entry: Written, seq: number): Promise<boolean> {
    if (entry.appender.storedSeq >= seq) return Promise.resolve(true);
    return new Promise((resolve, reject) => {
      const waiter: StoredWaiter = {
        seq,
        done: (stored) => {
          clearTimeout(timer);
          entry.waiting.delete(waiter);
          resolve(stored);
        },
      };
      const timer = setTimeout(() => {
        entry.waiting.delete(waiter);
        // Redis may answer and only be slow to take a backlog: the message says both, not "unreachable".
        reject(
          serviceUnavailable(
            `The task store (Redis) has not stored event ${seq} of task ${entry.record.id} within ${STORED_WAIT_MS} ms: it is unreachable or slow to take this instance's writes; try again`,
            REDIS_RETRY_AFTER_S,
          ),
        );
      }, STORED_WAIT_MS);
      entry.waiting.add(waiter);
    });
  }

  private async getTask(id: string): Promise<TaskView | undefined> {
    const entry = this.writing(id);
    const local = entry && (await this.localReplica(entry));
    if (local) return local;
    const [[, hash], [, first]] = (await this.redis
      .multi()
      .hgetall(this.key('task', id))
      .xrange(this.key('events', id), '-', '+', 'COUNT', 1)
      .exec()) as [[unknown, Record<string, string>], [unknown, [string, string[]][]]];
    const head = readHead(hash, first);
    return head && new RedisTaskReplica(this, head);
  }

  /**
   * The owner's index is a sorted set by status time: a page is one ZREVRANGEBYSCORE from the
   * cursor (more only when filters skip tasks). Tasks that expired are dropped from it on the way.
   */
  private async listTasks(owner: CallerId, query: ListTasksQuery): Promise<TaskPage> {
    const index = this.key('owner', ownerKey(owner));
    const cursor = query.pageToken ? decodeCursor(query.pageToken) : undefined;
    const batch = Math.max(query.pageSize + 1, 32);
    const page: TaskView[] = [];
    let offset = 0;
    let more = false;
    scan: for (;;) {
      const raw = await this.redis.zrevrangebyscore(index, cursor ? String(cursor.statusTime) : '+inf', '-inf', 'WITHSCORES', 'LIMIT', offset, batch);
      const members: { id: string; score: number }[] = [];
      for (let i = 0; i < raw.length; i += 2) members.push({ id: raw[i], score: Number(raw[i + 1]) });
      offset += members.length;
      const heads = await this.heads(members.map((m) => m.id));
      for (const [i, member] of members.entries()) {
        // Ties come in reverse id order: those up to the cursor were on earlier pages.
        if (cursor && member.score === cursor.statusTime && member.id >= cursor.id) continue;
        const head = heads[i];
        if (!head) {
          await this.redis.zrem(index, member.id);
          continue;
        }
        if (query.statusAfter !== undefined && head.statusTime <= query.statusAfter) break scan;
        if (query.contextId !== undefined && head.contextId !== query.contextId) continue;
        if (query.state !== undefined && head.state !== query.state) continue;
        if (page.length === query.pageSize) {
          more = true;
          break scan;
        }
        page.push(new RedisTaskReplica(this, head));
      }
      if (members.length < batch) break;
    }
    const lastTask = page[page.length - 1];
    const filtered = query.contextId !== undefined || query.state !== undefined || query.statusAfter !== undefined;
    const totalSize = filtered ? await this.count(index, query) : await this.redis.zcard(index);
    return { tasks: page, nextPageToken: more && lastTask ? encodeCursor(lastTask.statusTime, lastTask.id) : '', totalSize };
  }

  private async readConversation(contextId: string, owner: CallerId): Promise<Conversation> {
    const ids = await this.redis.lrange(this.key('context', ownerKey(owner), contextId), 0, -1);
    if (ids.length === 0) return { tasks: 0, turns: [] };
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hmget(this.key('task', id), 'userText', 'answer');
    const rows = ((await pipeline.exec()) ?? []).map(([, row]) => row as (string | null)[]);
    let tasks = 0;
    const turns: Conversation['turns'] = [];
    for (const [userText, answer] of rows) {
      if (userText === null) continue;
      tasks += 1;
      if (answer !== null) turns.push({ role: 'user', text: userText }, { role: 'agent', text: answer });
    }
    return { tasks, turns };
  }

  expire(id: string, afterMs: number): void {
    const entry = this.written.get(id);
    const finish = async (): Promise<void> => {
      if (entry) await entry.appender.drained();
      const owner = entry ? ownerKey(entry.record.owner) : undefined;
      this.runLeases.delete(id);
      // The message's claim, the conversation and the owner's listing expire with the task (the
      // last two live as long as their newest finished task).
      const more: string[] = [];
      const claim = this.claims.get(id);
      this.claims.delete(id);
      if (claim) more.push(claim);
      if (entry && owner !== undefined) more.push(this.key('context', owner, entry.record.contextId), this.key('owner', owner));
      // With retention caps, one call expires the task and files it among the finished tasks
      // (the oldest past the caps are evicted), once its end is stored: with the other tasks
      // that finished in the same turn, after that turn's appends (see RedisRetention.finished).
      if (this.retention) await this.retention.finished(id, afterMs, this.key('leases'), more);
      else {
        this.turnWrites.cork();
        const keys = [this.key('leases'), this.key('task', id), this.key('events', id), ...more];
        await this.scripts.expireTask(keys.length, ...keys, afterMs, id);
      }
    };
    const work = finish()
      .catch((err: unknown) => this.logger.error(`expiring task ${id} in Redis failed: ${err instanceof Error ? err.message : String(err)}`))
      .finally(() => {
        if (entry && this.written.get(id) === entry) this.written.delete(id);
        if (entry) this.followThroughRedis(entry);
        this.pendingWork.delete(work);
      });
    this.pendingWork.add(work);
  }

  size(): number {
    return this.written.size;
  }

  async close(): Promise<void> {
    // Events still waiting for Redis get a last chance, then are given up (and counted in the log).
    const waited = await Promise.race([
      Promise.all([...this.pendingWork, this.flushed()]).then(() => true),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), CLOSE_WAIT_MS).unref()),
    ]);
    if (!waited) {
      const lost = [...this.written.values()].reduce((sum, entry) => sum + entry.appender.stop(), 0);
      this.logger.error(`closing with Redis unreachable: ${lost} event(s) of ${this.written.size} task(s) were not stored`);
    }
    this.subscriber.disconnect();
    if (this.options.ownsConnection) this.redis.disconnect();
  }

  /** Everything written so far has reached Redis (for tests and shutdown). */
  async flushed(): Promise<void> {
    await Promise.all([...this.written.values()].map((entry) => entry.appender.drained()));
  }

  /** Events read from the task's stream after `after`, at most `count`. */
  async read(id: string, after: number, count = READ_BATCH): Promise<TaskEvent[]> {
    const entries = (await this.redis.xrange(this.key('events', id), `${after + 1}-1`, '+', 'COUNT', count)) as [string, string[]][];
    return entries.map(([entryId, fields]) => {
      const seq = Number(entryId.slice(0, entryId.indexOf('-')));
      const flags = fields[1] ?? '';
      return new TaskEvent(seq, fields[3] ?? 'null', flags.includes('t'), flags.includes('e'));
    });
  }

  watch(replica: RedisTaskReplica): void {
    const entry = this.writing(replica.id);
    if (entry) return this.watchLocally(replica, entry);
    const channel = this.key('channel', replica.id);
    let set = this.watchers.get(channel);
    if (!set) {
      this.watchers.set(channel, (set = new Set()));
      this.subscriberWrites.cork();
      this.subscribed.set(
        channel,
        this.subscriber.subscribe(channel).then(
          () => undefined,
          (err: unknown) => this.logger.warn(`subscribing to ${channel} failed: ${String(err)}`),
        ),
      );
    }
    if (set.has(replica)) return;
    set.add(replica);
    // What the writer published before the subscription took effect (or after the replica read
    // its head) would never reach it: once subscribed, it reads the head again.
    void this.subscribed.get(channel)?.then(() => this.readHeadAgain(replica));
  }

  private readHeadAgain(replica: RedisTaskReplica): Promise<void> {
    this.turnWrites.cork();
    return this.redis
      .hmget(this.key('task', replica.id), 'lastSeq', 'state')
      .then((head) => {
        const [seq, state] = head ?? [];
        if (seq && state) replica.advance(Number(seq), taskStateFromJSON(state));
      })
      .catch(() => undefined);
  }

  /**
   * The subscriber reconnected (Redis came back): what was published while it was away, or
   * before it resubscribed, never reaches it, so every followed task's head is read again, at
   * once and after a pause (ioredis resubscribes on its own, a little later).
   */
  private catchUp(): void {
    const all = (): void => {
      for (const set of this.watchers.values()) for (const replica of set) void this.readHeadAgain(replica);
    };
    all();
    setTimeout(all, CATCH_UP_AGAIN_MS).unref();
  }

  unwatch(replica: RedisTaskReplica): void {
    if (this.written.get(replica.id)?.local.delete(replica)) {
      replica.fedHere = false;
      return;
    }
    const channel = this.key('channel', replica.id);
    const set = this.watchers.get(channel);
    if (!set?.delete(replica) || set.size > 0) return;
    this.watchers.delete(channel);
    this.subscribed.delete(channel);
    this.subscriberWrites.cork();
    this.subscriber.unsubscribe(channel).catch(() => undefined);
  }

  private notify(channel: string, message: string): void {
    if (channel === this.key('channel', 'cancel')) {
      const request = parseCancel(message);
      if (request && this.taking.has(request.id)) {
        if (this.taking.get(request.id) === undefined) this.taking.set(request.id, request.reason);
      } else if (request && this.written.has(request.id)) this.cancelHandler?.(request.id, request.reason);
      return;
    }
    const newline = message.indexOf('\n');
    const [seq, state] = (newline === -1 ? message : message.slice(0, newline)).split(' ');
    const events = newline === -1 ? undefined : parsePublished(message.slice(newline + 1));
    for (const replica of this.watchers.get(channel) ?? []) replica.advance(Number(seq), taskStateFromJSON(state), events);
  }

  // ---- Run queue support (RedisRunQueue): queued tasks, run leases, taking a task over ----

  /**
   * Creates the task (SUBMITTED, event 1 the Task) and queues its run in one atomic step, unless
   * the queue already holds `maxQueued` runs (then nothing is created: undefined). No instance
   * writes the task until a worker takes it over (`takeOver`); the caller gets a reader.
   */
  async createQueued(init: NewTask, run: string, maxQueued: number): Promise<TaskView | undefined> {
    const record = new TaskRecord({ ...init, maxEvents: this.options.maxEventsPerTask, maxFinishedTools: this.options.maxFinishedToolsPerTask });
    const first = record.log.get(1) as TaskEvent;
    const snapshot = record.snapshot();
    const owner = ownerKey(init.owner);
    const state = taskStateToJSON(record.state);
    this.turnWrites.cork();
    const created = await unavailableIfDown(() =>
      this.scripts.createQueued(
        5,
        this.key('task', init.id),
        this.key('events', init.id),
        this.key('owner', owner),
        this.key('context', owner, init.contextId),
        this.key('runs'),
        init.id,
        init.contextId,
        owner,
        init.text,
        state,
        record.statusTime,
        JSON.stringify(Task.toJSON(snapshot)),
        first.json,
        this.options.runningTtlMs ?? DEFAULT_RUNNING_TTL_MS,
        maxQueued,
        run,
        this.claims.get(init.id) ?? '',
      ),
    );
    if (created !== 1) return undefined;
    // The claim's key is in the task's hash now, for the instance that expires the task.
    this.claims.delete(init.id);
    // Its one event is known here: the stream that sent the task reads it from the replica, not with XRANGE.
    return new RedisTaskReplica(
      this,
      { id: init.id, contextId: init.contextId, owner: init.owner, state: record.state, statusTime: record.statusTime, lastSeq: 1, newestSeq: 1, firstSeq: 1, snapshot },
      [first],
    );
  }

  /**
   * Makes this instance the task's single writer, atomically, if the task is still queued (no
   * worker took it yet) or its run's lease has expired (its worker was lost): a new lease, and
   * with `leaseMs` > 0 a run lease this instance renews (renewLeases). Resolves the writer, or
   * undefined when the task is gone, terminal, or not takeable that way. `entry`: the run's entry
   * in the queue (its consumer group and id), which leaves the queue in the same step either way.
   */
  async takeOver(id: string, from: 'queued' | 'expired', leaseMs: number, entry?: { group: string; id: string }): Promise<WrittenTask | undefined> {
    const lease = randomUUID();
    this.turnWrites.cork();
    const keys = [this.key('task', id), this.key('leases'), this.cancelFlagKey(id)];
    const args: (string | number)[] = [id, from, lease, leaseMs, RUNNER];
    if (entry) {
      keys.push(this.key('runs'));
      args.push(entry.group, entry.id);
    }
    const reply = (await this.scripts.takeOver(keys.length, ...keys, ...args)) as [string[], string | null] | null;
    if (!reply) return undefined;
    const [flat, cancelFlag] = reply;
    if (cancelFlag !== null && this.taking.has(id) && this.taking.get(id) === undefined) this.taking.set(id, cancelFlag);
    const hash: Record<string, string> = {};
    for (let i = 0; i < flat.length; i += 2) hash[flat[i]] = flat[i + 1];
    const head = readHead(hash, null);
    if (!head || isTerminalState(head.state)) return undefined;
    // The message claim expires with the task, whichever instance made it.
    if (hash.claim) this.claims.set(id, hash.claim);
    // The snapshot may be older than the newest event (head.lastSeq is the snapshot's): the tool
    // frames after it say which tools are open now; numbering goes on after the newest event.
    const lastSeq = Number(hash.lastSeq ?? head.lastSeq);
    const laterToolArtifacts = await this.toolArtifactsAfter(id, head.lastSeq, lastSeq);
    // A queued task holds only the Task its front wrote (event 1, made from the snapshot stored
    // with it): the writer's record holds it too, so a resume from before the take-over
    // (Last-Event-ID 0) replays events here as on any other instance, not a snapshot.
    const events = from === 'queued' && lastSeq === 1 && head.lastSeq === 1 ? [new TaskEvent(1, { payload: { $case: 'task', value: head.snapshot } })] : undefined;
    const record = this.register(id, ownerKey(head.owner), lease, { seq: lastSeq, snapshotSeq: head.lastSeq }, (onEvent) =>
      new TaskRecord({
        id,
        contextId: head.contextId,
        owner: head.owner,
        message: head.snapshot.history[0],
        text: hash.userText ?? '',
        maxEvents: WRITER_LOG_EVENTS,
        maxFinishedTools: this.options.maxFinishedToolsPerTask,
        onEvent,
        packWhenSettled: false,
        resumed: { snapshot: head.snapshot, lastSeq, answerText: hash.answer, laterToolArtifacts, events },
      }),
    );
    if (leaseMs > 0) this.runLeases.add(id);
    return record;
  }

  /** The tool artifacts of the events after `from` up to `to` (what a snapshot written earlier lacks), oldest first. */
  private async toolArtifactsAfter(id: string, from: number, to: number): Promise<Artifact[]> {
    const artifacts: Artifact[] = [];
    for (let after = from; after < to; ) {
      const events = await this.read(id, after);
      if (events.length === 0) break;
      for (const event of events) {
        if (!event.isToolFrame) continue;
        const payload = StreamResponse.fromJSON(JSON.parse(event.json)).payload;
        if (payload?.$case === 'artifactUpdate' && payload.value.artifact) artifacts.push(payload.value.artifact);
      }
      after = events[events.length - 1].seq;
    }
    return artifacts;
  }

  /**
   * Extends the run leases of the tasks this instance runs by `leaseMs`; resolves the ids whose
   * lease another instance took over meanwhile (this one was too slow to renew: it must stop).
   */
  async renewLeases(leaseMs: number): Promise<string[]> {
    const ids = [...this.runLeases].filter((id) => this.written.has(id));
    const lost = await inSlices(ids, async (all) => {
      // A run that ended while an earlier slice was on its way is not renewed (nor reported lost).
      const slice = all.filter((id) => this.runLeases.has(id) && this.written.has(id));
      if (slice.length === 0) return [];
      const args: (string | number)[] = [leaseMs];
      for (const id of slice) args.push(id, this.written.get(id)?.lease ?? '');
      return (await this.scripts.renewLeases(slice.length + 1, this.key('leases'), ...slice.map((id) => this.key('task', id)), ...args)) as string[];
    });
    for (const id of lost) this.runLeases.delete(id);
    return lost;
  }

  /** The key of a task's cancel flag (RedisRunQueue.flagCancel), read by the take-over step. */
  cancelFlagKey(id: string): string {
    return this.key('runs', 'cancel', id);
  }

  /**
   * From now until cancelReason(id), a cancel requested for the task (its flag read by takeOver,
   * or its PUBLISH) is kept for cancelReason, not handed to onCancelRequest: the worker is taking
   * the run and has not registered it yet.
   */
  expectCancel(id: string): void {
    this.taking.set(id, undefined);
  }

  /** The cancel kept since expectCancel(id), if any; from now on cancels go to onCancelRequest. */
  cancelReason(id: string): string | undefined {
    const reason = this.taking.get(id);
    this.taking.delete(id);
    return reason;
  }

  /** Ids of tasks whose run lease has expired (at most `count`), by Redis's clock. */
  async expiredLeases(count: number): Promise<string[]> {
    return (await this.scripts.expiredLeases(1, this.key('leases'), count)) as string[];
  }

  /** Tasks this instance runs under a run lease. */
  get leasedRuns(): number {
    return this.runLeases.size;
  }


  /**
   * Where a follower whose next events Redis no longer holds starts again: the stored snapshot
   * when newer than its cursor, and whether the follower is more than twice maxEventsPerTask
   * behind the newest event (as far as an in-memory task's log waits for a listener). 'later':
   * not newer yet (a backlog longer than one call is going out; its last call stores a newer
   * snapshot, see APPEND_SCRIPT). Undefined: the task is gone or ended, the follower is cut.
   */
  async restartPoint(id: string, cursor: number): Promise<{ head: Head; farBehind: boolean } | 'later' | undefined> {
    const hash = await this.redis.hgetall(this.key('task', id));
    const head = readHead(hash, null);
    if (!head) return undefined;
    if (head.lastSeq <= cursor) return isTerminalState(head.state) ? undefined : 'later';
    return { head, farBehind: head.newestSeq - cursor > 2 * this.options.maxEventsPerTask };
  }

  private async heads(ids: string[]): Promise<(Head | undefined)[]> {
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.key('task', id)).xrange(this.key('events', id), '-', '+', 'COUNT', 1);
    const results = (await pipeline.exec()) ?? [];
    return ids.map((_, i) => readHead(results[2 * i][1] as Record<string, string>, results[2 * i + 1][1] as [string, string[]][]));
  }

  private async count(index: string, query: ListTasksQuery): Promise<number> {
    const ids = await this.redis.zrevrangebyscore(index, '+inf', query.statusAfter === undefined ? '-inf' : `(${query.statusAfter}`);
    const heads = await this.heads(ids);
    return heads.filter(
      (head) =>
        head !== undefined &&
        (query.contextId === undefined || head.contextId === query.contextId) &&
        (query.state === undefined || head.state === query.state),
    ).length;
  }
}

/**
 * A task as another instance reads it from Redis: the head and snapshot as loaded, then (once
 * followed) its events from the stream, told of new ones by the writer's PUBLISH.
 */
export class RedisTaskReplica implements TaskView {
  readonly id: string;
  readonly contextId: string;
  readonly owner: CallerId;
  state: TaskState;
  statusTime: number;
  lastSeq: number;
  private readonly storedNewestSeq: number;
  private readonly firstSeq: number;
  private readonly task: TaskType;
  private readonly listeners = new Set<TaskListener>();
  /**
   * Whether a pump runs for the listener (true), by listener while it follows: the entry stays
   * between pumps (false), since deleting a Set's only entry made V8 shrink its table, a new
   * table of ~120 bytes per batch and listener.
   */
  private readonly pumping = new Map<TaskListener, boolean>();
  private readonly again = new Set<TaskListener>();
  private readonly onSettled: (() => void)[] = [];
  /** The newest events the writer published (see keepTail). */
  private tail: TaskEvent[] = [];
  /** The JSON characters the tail holds. */
  private tailChars = 0;
  private settledPromise?: Promise<void>;
  /**
   * Fed by the appender of this instance, which writes the task (see RedisTaskStore.watch):
   * the tail then holds its slowest stream's place, as the record's log does in memory.
   */
  fedHere = false;

  constructor(
    private readonly store: RedisTaskStore,
    head: Head,
    /** The task's newest events, when the caller has them (a front that just queued the task). */
    tail?: TaskEvent[],
  ) {
    this.id = head.id;
    this.contextId = head.contextId;
    this.owner = head.owner;
    this.state = head.state;
    this.statusTime = head.statusTime;
    this.lastSeq = head.lastSeq;
    this.storedNewestSeq = head.newestSeq;
    this.firstSeq = head.firstSeq;
    this.task = head.snapshot;
    if (tail?.length) this.keepTail(tail);
  }

  get isTerminal(): boolean {
    return isTerminalState(this.state);
  }

  get newestSeq(): number {
    return Math.max(this.lastSeq, this.storedNewestSeq);
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  get settled(): Promise<void> {
    this.settledPromise ??= new Promise((resolve) => this.whenSettled(resolve));
    return this.settledPromise;
  }

  whenSettled(callback: () => void): void {
    if (this.isTerminal) return callback();
    this.onSettled.push(callback);
    this.store.watch(this);
  }

  snapshot(options: SnapshotOptions = {}): TaskType {
    const { historyLength, includeArtifacts = true } = options;
    const history = historyLength === undefined ? this.task.history : historyLength === 0 ? [] : this.task.history.slice(-historyLength);
    return { ...this.task, history, artifacts: includeArtifacts ? this.task.artifacts : [] };
  }

  retainsAfter(seq: number): boolean {
    return seq >= this.firstSeq - 1;
  }

  follow(listener: TaskListener): () => void {
    this.listeners.add(listener);
    this.store.watch(this);
    this.store.countFollower(this.id, 1);
    this.pump(listener);
    let counted = true;
    return () => {
      this.listeners.delete(listener);
      if (this.pumping.get(listener) === false) this.pumping.delete(listener);
      // Not once the task ended: the count is read only while it runs (a client that left and
      // may rejoin), and it expires on its own; this saves a call per stream in a task's end.
      if (counted && !this.isTerminal) this.store.countFollower(this.id, -1);
      counted = false;
      this.release();
    };
  }

  resume(listener: TaskListener): void {
    if (this.listeners.has(listener)) this.pump(listener);
  }

  /** Redis trims to the cap (never past the stored snapshot); a stream that starts late reads from what is retained. */
  hold(): () => void {
    return () => undefined;
  }

  /** The writer published up to `seq`. */
  advance(seq: number, state: TaskState, events?: TaskEvent[]): void {
    if (events?.length) this.keepTail(events);
    // A head read late (see RedisTaskStore.watch) must not take the state back.
    if (!this.isTerminal && seq >= this.lastSeq) this.state = state;
    if (seq > this.lastSeq) this.lastSeq = seq;
    for (const listener of this.listeners) this.pump(listener);
    if (this.isTerminal) {
      for (const callback of this.onSettled.splice(0)) callback();
      this.release();
    }
  }

  /** Keeps the newest published events, contiguous, so that followers need no XRANGE for them. */
  private keepTail(events: TaskEvent[]): void {
    const last = this.tail[this.tail.length - 1]?.seq;
    if (last === undefined || events[0].seq > last + 1) this.dropTailHead(this.tail.length);
    for (const event of events) {
      if (last !== undefined && event.seq <= last) continue;
      this.tail.push(event);
      this.tailChars += event.weight;
    }
    if (this.fedHere && this.listeners.size > 0) {
      // On the writing instance the tail holds the events its streams still need (trimTail drops
      // the others), from the slowest one's place up to twice maxEventsPerTask, as a task's log
      // in memory holds a listener's place: a stream that started a long task, and fell behind
      // what Redis keeps (MAXLEN), still gets every event. One further behind is cut (see pump).
      // The batch that just came stays whole: the streams that take events now get it next.
      this.dropTailHead(this.tail.length - 2 * this.store.maxEventsPerTask - events.length);
      return;
    }
    // Bounded in count and in characters: a listener behind the tail reads the stream, where it
    // finds any gap past what Redis keeps and restarts from a snapshot, or is cut when it stopped
    // reading (large frames fill the characters first: without this bound a stalled listener
    // found every event in the tail and was never cut).
    let drop = Math.max(0, this.tail.length - TAIL_EVENTS);
    let chars = this.tailChars;
    for (let i = 0; i < drop; i++) chars -= this.tail[i].weight;
    while (chars > TAIL_CHARS && drop < this.tail.length) chars -= this.tail[drop++].weight;
    this.dropTailHead(drop);
  }

  private dropTailHead(count: number): void {
    if (count <= 0) return;
    if (count >= this.tail.length) {
      // A paced stream's replica empties its tail after every batch (trimTail): a short one is
      // emptied in place, a long one goes at once (see emptiedForReuse).
      this.tail = emptiedForReuse(this.tail, SHORT_TAIL);
      this.tailChars = 0;
      return;
    }
    for (let i = 0; i < count; i++) this.tailChars -= this.tail[i].weight;
    this.tail.splice(0, count);
  }

  /**
   * Drops the kept events that every listener has had: the tail holds what is still to be
   * delivered, not the newest TAIL_EVENTS whatever happened to them (events kept past their
   * delivery outlive the young generation's collections, which copy and then promote them).
   * A listener that comes later reads what the tail lacks from the store, as it would anyway.
   */
  private trimTail(): void {
    const first = this.tail[0]?.seq;
    if (first === undefined || this.listeners.size === 0) return;
    let slowest = Number.POSITIVE_INFINITY;
    for (const listener of this.listeners) if (listener.cursor < slowest) slowest = listener.cursor;
    this.dropTailHead(slowest - first + 1);
  }

  /** The events after `cursor` when the kept tail holds all of them up to the newest known one. */
  private fromTail(cursor: number): TaskEvent[] | undefined {
    // Nothing newer is known (the tail may be empty, every listener had it): no read. The writer's
    // next batch, or the head read again once subscribed (see RedisTaskStore.watch), says when
    // there is; without this, the front of a queued task read its stream once more (XRANGE) when
    // that head read found the task still queued.
    if (cursor >= this.newestSeq) return [];
    const first = this.tail[0]?.seq;
    const last = this.tail[this.tail.length - 1]?.seq;
    if (first === undefined || last === undefined || first > cursor + 1 || last < cursor || last < this.lastSeq) return undefined;
    return this.tail.slice(cursor + 1 - first);
  }

  private release(): void {
    if (this.listeners.size === 0 && this.onSettled.length === 0) this.store.unwatch(this);
  }

  /**
   * Hands the listener the stored snapshot as a Task event (see restartPoint: 'sent'); 'wait'
   * while the listener takes nothing, or the snapshot is not newer than its place yet (it is
   * pumped again when it takes events, or the writer's next batch comes); 'none': it is cut.
   */
  private async restartFromSnapshot(listener: TaskListener): Promise<'sent' | 'wait' | 'none'> {
    const point = await this.store.restartPoint(this.id, listener.cursor);
    if (!this.listeners.has(listener) || point === 'later') return 'wait';
    if (!point) return 'none';
    // One that takes nothing, twice the cap behind, is cut as in memory; one that takes events goes on.
    if (listener.ready && !listener.ready()) return point.farBehind ? 'none' : 'wait';
    const { head } = point;
    // A terminal snapshot ends the stream: the status update it holds is the last event.
    const terminal = isTerminalState(head.state);
    listener.cursor = head.lastSeq;
    if (head.lastSeq > this.lastSeq) this.lastSeq = head.lastSeq;
    listener.push(new TaskEvent(head.lastSeq, { payload: { $case: 'task', value: head.snapshot } }, false, terminal));
    return 'sent';
  }

  /**
   * Hands over the events after the listener's cursor, while it is ready. Not an async function:
   * a paced stream finds its next events in the tail (every batch of the writer, here or through
   * the PUBLISH), and an async call per batch and listener made a promise and a frame of the
   * function's registers each time (~0.3 kB of heap per frame at 100 paced streams). Only a
   * listener whose events the tail lacks goes on in pumpFromStore, which reads the stream.
   */
  private pump(listener: TaskListener): void {
    if (this.pumping.get(listener) === true) {
      this.again.add(listener);
      return;
    }
    this.pumping.set(listener, true);
    this.again.delete(listener);
    let handedOver = false;
    try {
      do {
        while (this.listeners.has(listener)) {
          const events = this.fromTail(listener.cursor);
          if (events === undefined || (events.length > 0 && events[0].seq !== listener.cursor + 1)) {
            // The stream has them (or a restart is due): pumpFromStore goes on from here, holding
            // `pumping` and the `again` flag as they are now.
            handedOver = true;
            void this.pumpFromStore(listener);
            return;
          }
          if (events.length === 0) break;
          if (!this.handOver(listener, events)) return;
          if (events.length < READ_BATCH) break;
        }
      } while (this.again.delete(listener));
    } catch {
      this.cut(listener);
    } finally {
      if (!handedOver) this.pumpEnded(listener);
    }
  }

  /** A pump ended: the listener's entry stays while it follows (see pumping), and the tail drops what every follower has. */
  private pumpEnded(listener: TaskListener): void {
    if (this.listeners.has(listener)) this.pumping.set(listener, false);
    else this.pumping.delete(listener);
    this.trimTail();
  }

  /** Stops feeding a listener that failed or fell too far behind: it is told once, if it still follows. */
  private cut(listener: TaskListener): void {
    if (this.listeners.delete(listener)) listener.overrun();
  }

  /** pump's loop, for a listener that needs events from the stream (it holds `pumping` already). */
  private async pumpFromStore(listener: TaskListener): Promise<void> {
    try {
      do {
        // Until the stream has nothing more: the head read may lag the stream (see readHead).
        while (this.listeners.has(listener)) {
          const events = this.fromTail(listener.cursor) ?? (await this.store.read(this.id, listener.cursor));
          if (events.length === 0) break;
          if (events[0].seq !== listener.cursor + 1) {
            // The writer outran this stream past what Redis keeps (maxEventsPerTask): the stream
            // goes on from the task as stored now (a Task snapshot), then the live events, as a
            // resume from a dropped event does; one more than twice the cap behind is cut, as in memory.
            const restarted = await this.restartFromSnapshot(listener);
            if (restarted === 'none') {
              this.cut(listener);
              return;
            }
            // 'wait': the writer's batch that stores the newer snapshot may have come while the
            // head was read (its PUBLISH only marked this pump to go again): the loop's end looks.
            if (restarted === 'wait') break;
            continue;
          }
          if (!this.handOver(listener, events)) return;
          if (events.length < READ_BATCH) break;
        }
      } while (this.again.delete(listener));
    } catch {
      this.cut(listener);
    } finally {
      this.pumpEnded(listener);
    }
  }

  /**
   * Pushes `events` (the next ones after the listener's cursor) while it takes them; false when it
   * stopped taking them or is no longer followed: the pump ends (resume starts it again).
   */
  private handOver(listener: TaskListener, events: TaskEvent[]): boolean {
    for (const event of events) {
      if (!this.listeners.has(listener)) return false;
      if (listener.ready && !listener.ready()) {
        // A stream that stopped taking events more than twice the cap behind is cut, as a
        // task's log in memory cuts it (the tail would otherwise hold its events for it).
        if (this.lastSeq - listener.cursor > 2 * this.store.maxEventsPerTask) this.cut(listener);
        return false;
      }
      if (event.seq > this.lastSeq) this.lastSeq = event.seq;
      listener.cursor = event.seq;
      listener.push(event);
    }
    return true;
  }
}

/** Seconds a client is told to wait while Redis is unreachable (Retry-After). */
const REDIS_RETRY_AFTER_S = 2;

/** A store call while Redis is unreachable: a clear 503 naming Redis, never a hang or a stack. */
export async function unavailableIfDown<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (isKnownError(err)) throw err;
    throw serviceUnavailable(`The task store (Redis) is unreachable: ${err instanceof Error ? err.message : String(err)}`, REDIS_RETRY_AFTER_S);
  }
}

/** The events of a PUBLISH: one per line, `seq flags json`. */
function parsePublished(text: string): TaskEvent[] {
  return text.split('\n').map((line) => {
    const a = line.indexOf(' ');
    const b = line.indexOf(' ', a + 1);
    const flags = line.slice(a + 1, b);
    return new TaskEvent(Number(line.slice(0, a)), line.slice(b + 1), flags.includes('t'), flags.includes('e'));
  });
}

function parseCancel(message: string): { id: string; reason: string } | undefined {
  try {
    const parsed = JSON.parse(message) as { id?: unknown; reason?: unknown };
    if (typeof parsed.id === 'string') return { id: parsed.id, reason: typeof parsed.reason === 'string' ? parsed.reason : 'cancelled' };
  } catch {
    // not ours: ignored below
  }
  return undefined;
}

/** A caller as it appears in keys and in the task hash's `owner` field. */
export function ownerKey(owner: CallerId): string {
  return owner === undefined ? '-' : `c${owner}`;
}

function readHead(hash: Record<string, string> | null, first: [string, string[]][] | null): Head | undefined {
  if (!hash || !hash.id || !hash.snapshot) return undefined;
  const firstId = first?.[0]?.[0];
  return {
    id: hash.id,
    contextId: hash.contextId,
    owner: hash.owner === '-' ? undefined : hash.owner.slice(1),
    state: taskStateFromJSON(hash.state),
    statusTime: Number(hash.statusTime),
    // The snapshot's seq (it may be older than the newest event): a reader starts there and reads the rest from the stream.
    lastSeq: Number(hash.snapshotSeq ?? hash.lastSeq),
    newestSeq: Number(hash.lastSeq),
    firstSeq: firstId ? Number(firstId.slice(0, firstId.indexOf('-'))) : Number(hash.lastSeq) + 1,
    snapshot: Task.fromJSON(JSON.parse(hash.snapshot)),
  };
}

function encodeCursor(statusTime: number, id: string): string {
  return Buffer.from(JSON.stringify([statusTime, id])).toString('base64url');
}

function decodeCursor(token: string): { statusTime: number; id: string } {
  try {
    const [statusTime, id] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown[];
    if (typeof statusTime === 'number' && typeof id === 'string') return { statusTime, id };
  } catch {
    // falls through to the error below
  }
  throw invalidParams([{ field: 'pageToken', description: 'is not a page token this server issued' }]);
}
