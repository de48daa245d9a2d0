import { Logger } from '@nestjs/common';
import { TaskState, taskStateToJSON } from '@a2a-js/sdk';
import type Redis from 'ioredis';
import { tooManyLiveTasks } from '../a2a-errors';
import { defineScript, inSlices, type ScriptCall } from './redis-scripts';
import { RedisTurnWrites } from './redis-turn-writes';
import type { CallerId } from '../task-record';

/** Now by Redis's clock (ms), so that hosts whose clocks differ agree on every deadline. */
const REDIS_NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * Takes a live slot for a task in the server's set and its caller's set, both or neither: each
 * holds the live tasks' ids scored by a deadline their instance renews; lapsed ones are dropped
 * first (an instance that died gave its slots back when its leases lapsed).
 * KEYS: server set, caller set. ARGV: id, lease ms, maxLiveTasks, maxLiveTasksPerCaller.
 * Returns 1 (admitted), -1 (the server is full) or -2 (the caller is).
 */
export const ADMIT_LIVE_SCRIPT = `${REDIS_NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return -1 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return -2 end
local due = now + tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], due, ARGV[1])
redis.call('ZADD', KEYS[2], due, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
`;

const TERMINAL = [TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED]
  .map((state) => `['${taskStateToJSON(state)}'] = true`)
  .join(', ');

/**
 * Renews the slots of the tasks an instance holds; a task that is terminal (or gone) by its hash
 * gives its slot back instead (whoever saw it end may have missed saying so). A slot that lapsed
 * meanwhile (this instance stalled past the lease) is taken again: the task still runs.
 * KEYS: server set, then (caller set, task hash) per task. ARGV: lease ms, then the ids.
 * Returns the ids whose slot was given back.
 */
export const RENEW_LIVE_SCRIPT = `${REDIS_NOW}
local terminal = { ${TERMINAL} }
local due = now + tonumber(ARGV[1])
local released = {}
for i = 2, #ARGV do
  local id = ARGV[i]
  local callerSet = KEYS[2 * (i - 1)]
  local state = redis.call('HGET', KEYS[2 * (i - 1) + 1], 'state')
  if not state or terminal[state] then
    redis.call('ZREM', KEYS[1], id)
    redis.call('ZREM', callerSet, id)
    released[#released + 1] = id
  else
    redis.call('ZADD', KEYS[1], due, id)
    redis.call('ZADD', callerSet, due, id)
    redis.call('PEXPIRE', callerSet, ARGV[1])
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return released
`;

/** Released ids remembered per generation (a task's second release comes right after its first). */
const RELEASED_REMEMBERED = 4_096;

export interface RedisLiveLimitsOptions {
  redis: Redis;
  /** The server's set of live tasks. */
  key: string;
  /** A caller's set of live tasks. */
  callerSet: (caller: CallerId) => string;
  /** A task's hash (its `state` field says whether it still runs). */
  taskKey: (id: string) => string;
  maxLiveTasks: number;
  maxLiveTasksPerCaller: number;
  /** How long a slot lasts unless its instance renews it (renewed every third of it). */
  leaseMs: number;
  /** Seconds a refused client is told to wait (Retry-After). */
  retryAfterSeconds: number;
  /** Runs a Redis call, turning an unreachable Redis into the store's clear 503. */
  guard: <T>(call: () => Promise<T>) => Promise<T>;
}

/**
 * maxLiveTasks and maxLiveTasksPerCaller across every instance on one Redis: a live task holds a
 * slot (ADMIT_LIVE_SCRIPT, one atomic step for both limits) from its admission until it ends,
 * renewed by the instances that front or run it. A slot is given back when the task ends, is
 * cancelled or its worker is lost (release), or, if every instance holding it died, when its
 * lease lapses.
 */
export class RedisLiveLimits {
  private readonly logger = new Logger(RedisLiveLimits.name);
  /** Tasks whose slot this instance renews, with their caller's set. */
  private readonly held = new Map<string, string>();
  /** Slots released and not yet sent, by caller set (see release). */
  private readonly freeing = new Map<string, string[]>();
  /** Ids whose slot this instance gave back lately (two generations, RELEASED_REMEMBERED each at most). */
  private released = new Set<string>();
  private releasedBefore = new Set<string>();
  private timer?: NodeJS.Timeout;
  private renewing = false;
  private failing = false;

  private readonly admitScript: ScriptCall;
  private readonly renewScript: ScriptCall;
  /** An admission and a burst's release leave with the other commands of their turn, in one write. */
  private readonly writes: RedisTurnWrites;

  constructor(private readonly options: RedisLiveLimitsOptions) {
    this.admitScript = defineScript(options.redis, ADMIT_LIVE_SCRIPT);
    this.renewScript = defineScript(options.redis, RENEW_LIVE_SCRIPT);
    this.writes = new RedisTurnWrites(options.redis);
  }

  /** Takes a slot for the task, or refuses with the same errors as the in-memory limits (503 server / 429 caller, Retry-After). */
  async admit(id: string, caller: CallerId): Promise<void> {
    const { key, leaseMs, maxLiveTasks, maxLiveTasksPerCaller, retryAfterSeconds } = this.options;
    // Slots released just before go first (the same connection keeps the order).
    this.writes.cork();
    this.free();
    // A slot taken (again) under this id is released when its task ends, whatever came before.
    this.released.delete(id);
    this.releasedBefore.delete(id);
    const admitted = await this.options.guard(() => this.admitScript(2, key, this.options.callerSet(caller), id, leaseMs, maxLiveTasks, maxLiveTasksPerCaller));
    if (admitted === -1) throw tooManyLiveTasks('server', maxLiveTasks, 'maxLiveTasks', retryAfterSeconds);
    if (admitted === -2) throw tooManyLiveTasks('caller', maxLiveTasksPerCaller, 'maxLiveTasksPerCaller', retryAfterSeconds);
  }

  /** This instance fronts or runs the task: it renews the task's slot until `release`. */
  hold(id: string, caller: CallerId): void {
    this.held.set(id, this.options.callerSet(caller));
    if (this.timer) return;
    this.timer = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.options.leaseMs / 3)));
    this.timer.unref();
  }

  /**
   * The task ended (or never got created): its slot is free for the next admission, on any
   * instance. The slots freed together (tasks ending in one burst) go in one MULTI with one
   * ZREM per set, sent on the next event-loop turn; a task whose slot this instance already
   * gave back (its front and its worker both say so when they are one process) is skipped.
   */
  release(id: string, caller: CallerId): void {
    this.held.delete(id);
    this.stopWhenIdle();
    if (this.released.has(id) || this.releasedBefore.has(id)) return;
    this.released.add(id);
    if (this.released.size >= RELEASED_REMEMBERED) {
      this.releasedBefore = this.released;
      this.released = new Set();
    }
    const callerSet = this.options.callerSet(caller);
    const ids = this.freeing.get(callerSet);
    if (ids) ids.push(id);
    else this.freeing.set(callerSet, [id]);
    // On the next turn: tasks that end together end in the I/O callbacks of one turn.
    if (this.freeing.size === 1 && ids === undefined) setImmediate(() => this.free());
  }

  /** Sends the slots released since the last call (admit sends them first, so that they count). */
  private free(): void {
    if (this.freeing.size === 0) return;
    this.writes.cork();
    const multi = this.options.redis.multi();
    const all: string[] = [];
    for (const [callerSet, ids] of this.freeing) {
      multi.zrem(callerSet, ...ids);
      all.push(...ids);
    }
    this.freeing.clear();
    multi
      .zrem(this.options.key, ...all)
      .exec()
      // Unreachable: nobody renews them any more, so they lapse within the lease.
      .catch(() => undefined);
  }

  /** Slots this instance renews. */
  get heldSlots(): number {
    return this.held.size;
  }

  /** Stops renewing (the slots still held lapse within the lease). */
  stop(): void {
    this.held.clear();
    this.stopWhenIdle();
  }

  /** Extends every slot held here by a lease; slots of tasks that ended meanwhile are given back. */
  async renew(): Promise<void> {
    if (this.renewing || this.held.size === 0) return;
    this.renewing = true;
    try {
      const released = await inSlices([...this.held.keys()], async (all) => {
        // A slot released while an earlier slice was on its way is not renewed.
        const ids = all.filter((id) => this.held.has(id));
        if (ids.length === 0) return [];
        const keys = [this.options.key];
        for (const id of ids) keys.push(this.held.get(id) as string, this.options.taskKey(id));
        return (await this.renewScript(keys.length, ...keys, this.options.leaseMs, ...ids)) as string[];
      });
      for (const id of released) this.held.delete(id);
      this.stopWhenIdle();
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.logger.warn(`renewing live-task slots in Redis failed (they lapse after ${this.options.leaseMs} ms unless renewed): ${err instanceof Error ? err.message : String(err)}`);
      this.failing = true;
    } finally {
      this.renewing = false;
    }
  }

  private stopWhenIdle(): void {
    if (this.held.size > 0 || !this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
