import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import type { SkillRequest } from '../../runtime';
import { serviceUnavailable } from '../a2a-errors';
import { unavailableIfDown, type RedisTaskStore } from './redis-task-store';
import { defineScript, type ScriptCall } from './redis-scripts';
import { QUEUED_BEFORE_SCRIPT, RUN_DONE_SCRIPT } from './run-queue-scripts';
import type { NewTask, TaskView, WrittenTask } from './task-store';

export interface RunQueueOptions {
  /** How long a worker's hold on a run lasts without renewal (renewed every third of it). */
  leaseMs: number;
  /** Runs waiting for a worker, at most; past it a send is refused with 503. */
  maxQueuedRuns: number;
  /** Runs one worker process runs at once. */
  maxConcurrentRuns: number;
  /** How long a task a reaper ended stays readable. */
  taskTtlMs: number;
  /** How long a run may wait for a worker; past it its task ends FAILED (queueTimeoutMessage). */
  queueTimeoutMs: number;
  /** A task the queue ended itself (cancelled while queued, worker lost). */
  ended?: (task: WrittenTask) => void;
}

export const RUN_QUEUE_DEFAULTS = { leaseMs: 10_000, maxQueuedRuns: 10_000, maxConcurrentRuns: 32 } as const;

/** The status message of a task whose worker stopped renewing its lease (died, hung or cut off). */
export const WORKER_LOST_MESSAGE =
  'the worker running this task was lost (its lease expired); the run is not restarted, since its tools may have had side effects';

/** The status message of a task whose run no worker took in time. */
export const queueTimeoutMessage = (ms: number): string =>
  `no worker took the run within ${ms} ms (redis.queueTimeoutMs): no instance with role all or worker was free to run it; the run is not started`;

/** How long a cancel flag waits for the worker that was taking the run (see flagCancel). */
const CANCEL_FLAG_TTL_MS = 5 * 60_000;

/** Consumer group of the workers on the run stream. */
const GROUP = 'workers';
/** How long a worker's read waits for a run before it looks again (and can stop). */
const READ_BLOCK_MS = 1_000;
/** Seconds a client refused for a full queue is told to wait (Retry-After). */
const QUEUE_FULL_RETRY_AFTER_S = 5;
/** Expired leases a reaper takes over per pass. */
const REAP_BATCH = 50;

interface QueuedRun {
  taskId: string;
  request: SkillRequest;
}

/**
 * The durable run queue of Redis mode: a Redis Stream of runs read by the workers' consumer
 * group. A front creates the task and queues its run in one step; a worker reads it, takes the
 * task's writer lease (TAKE_OVER_SCRIPT) and runs it, renewing the lease every third of
 * `leaseMs`. Every instance reaps tasks whose lease expired: the task ends FAILED with
 * WORKER_LOST_MESSAGE and its open tools are closed as failed. A lost run is never run again.
 * An entry read by a worker that died before taking its task is claimed by another (XAUTOCLAIM).
 */
export class RedisRunQueue {
  private readonly logger = new Logger(RedisRunQueue.name);
  private readonly consumer = randomUUID();
  private reader?: Redis;
  private loop?: Promise<void>;
  private readonly timers: NodeJS.Timeout[] = [];
  private stopped = false;
  private running = 0;
  private wake?: () => void;
  private reaping = false;
  private lastReadError = 0;

  private readonly queuedBefore: ScriptCall;
  /** An entry leaves the queue: acknowledged and deleted in one step (RUN_DONE_SCRIPT). */
  private readonly done: ScriptCall;

  constructor(
    private readonly store: RedisTaskStore,
    private readonly options: RunQueueOptions,
  ) {
    this.queuedBefore = defineScript(store.redis, QUEUED_BEFORE_SCRIPT);
    this.done = defineScript(store.redis, RUN_DONE_SCRIPT);
  }

  private get key(): string {
    return this.store.key('runs');
  }

  /** Runs this worker runs now. */
  get runningRuns(): number {
    return this.running;
  }

  /**
   * Creates the task and queues its run (one atomic step). A full queue creates nothing and
   * refuses with 503 and Retry-After, naming the limit.
   */
  async enqueue(init: NewTask, request: SkillRequest): Promise<TaskView> {
    const run: QueuedRun = { taskId: init.id, request };
    const task = await this.store.createQueued(init, JSON.stringify(run), this.options.maxQueuedRuns);
    if (!task) {
      throw serviceUnavailable(
        `The run queue is full: ${this.options.maxQueuedRuns} runs wait for a worker (maxQueuedRuns); retry later`,
        QUEUE_FULL_RETRY_AFTER_S,
      );
    }
    return task;
  }

  /** Cancels a task whose run no worker has taken yet; false when one has (or it is gone). */
  async cancelQueued(id: string, reason: string): Promise<boolean> {
    const task = await this.store.takeOver(id, 'queued', 0);
    if (!task) return false;
    task.cancel(reason);
    this.store.expire(id, this.options.taskTtlMs);
    this.options.ended?.(task);
    return true;
  }

  /**
   * A CancelTask for a task a worker took: flagged in Redis before the cancel is published, so
   * that a worker still registering the run (it would miss the publish) sees the flag once it has
   * (cancelFlag) and never starts it.
   */
  flagCancel(id: string, reason: string): Promise<void> {
    return unavailableIfDown(async () => {
      await this.store.redis.set(this.store.cancelFlagKey(id), reason, 'PX', CANCEL_FLAG_TTL_MS);
    });
  }

  /**
   * The reason of a CancelTask asked while this worker was taking the run, if any: its flag, read
   * in the take-over step, or its PUBLISH, kept since (see RedisTaskStore.expectCancel). Called
   * once the run is registered, so that any later cancel reaches it the usual way.
   */
  async cancelFlag(id: string): Promise<string | undefined> {
    return this.store.cancelReason(id);
  }

  /** Every instance reaps: each third of the lease time, tasks whose worker was lost end FAILED. */
  startReaper(): void {
    this.every(Math.max(50, Math.floor(this.options.leaseMs / 3)), () => this.reap());
  }

  /**
   * Takes runs from the queue, at most maxConcurrentRuns at once, each as its task's writer,
   * and hands each to `run`; renews their leases. `lost` gets a run whose lease another instance
   * took over meanwhile (this worker stalled past its lease: its writes are refused from then on).
   */
  startWorker(run: (task: WrittenTask, request: SkillRequest) => void, lost: (id: string) => void): void {
    this.reader = this.store.redis.duplicate();
    this.reader.on('error', () => undefined);
    this.loop = this.work(run);
    this.every(Math.max(50, Math.floor(this.options.leaseMs / 3)), async () => {
      for (const id of await this.store.renewLeases(this.options.leaseMs)) lost(id);
      await this.claimAbandoned(run);
    });
  }

  /** Stops taking runs (the runs already taken go on) and stops the timers. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
    this.wake?.();
    this.reader?.disconnect();
    await this.loop;
  }

  private every(ms: number, tick: () => Promise<void>): void {
    let busy = false;
    const timer = setInterval(() => {
      if (busy || this.stopped) return;
      busy = true;
      tick()
        .catch((err: unknown) => this.logger.warn(`run queue: ${err instanceof Error ? err.message : String(err)}`))
        .finally(() => (busy = false));
    }, ms);
    timer.unref();
    this.timers.push(timer);
  }

  private async ensureGroup(): Promise<void> {
    try {
      await this.store.redis.xgroup('CREATE', this.key, GROUP, '0', 'MKSTREAM');
    } catch (err) {
      if (!String(err).includes('BUSYGROUP')) throw err;
    }
  }

  private async work(run: (task: WrittenTask, request: SkillRequest) => void): Promise<void> {
    await this.ensureGroup().catch(() => undefined);
    while (!this.stopped) {
      const free = this.options.maxConcurrentRuns - this.running;
      if (free <= 0) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        continue;
      }
      let entries: [string, string[]][] = [];
      try {
        const reply = (await this.reader?.xreadgroup('GROUP', GROUP, this.consumer, 'COUNT', free, 'BLOCK', READ_BLOCK_MS, 'STREAMS', this.key, '>')) as
          | [string, [string, string[]][]][]
          | null;
        entries = reply?.[0]?.[1] ?? [];
      } catch (err) {
        if (this.stopped) return;
        // Redis restarted without its data: the group is gone with the stream.
        if (String(err).includes('NOGROUP')) await this.ensureGroup().catch(() => undefined);
        else await this.pauseAfterError(err);
        continue;
      }
      for (const [entryId, fields] of entries) await this.take(entryId, fields, run);
    }
  }

  private async pauseAfterError(err: unknown): Promise<void> {
    if (Date.now() - this.lastReadError > 10_000) this.logger.warn(`reading the run queue failed: ${err instanceof Error ? err.message : String(err)}`);
    this.lastReadError = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 500).unref());
  }

  /** Takes over the entry's task and runs it; the entry leaves the queue once decided either way (in the take-over's step). */
  private async take(entryId: string, fields: string[], run: (task: WrittenTask, request: SkillRequest) => void): Promise<void> {
    const queued = parseRun(fields);
    if (!queued) {
      // Not a run: it leaves the queue.
      await this.done(1, this.key, GROUP, entryId).catch(() => undefined);
      return;
    }
    let task: WrittenTask | undefined;
    this.store.expectCancel(queued.taskId);
    try {
      task = await this.store.takeOver(queued.taskId, 'queued', this.options.leaseMs, { group: GROUP, id: entryId });
    } catch (err) {
      this.store.cancelReason(queued.taskId);
      // Left pending (unless the step ran and only its reply was lost): this worker or another claims it again once Redis answers.
      this.logger.warn(`taking run ${entryId} failed: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    // Not taken here: a cancel of it is someone else's.
    if (!task) {
      this.store.cancelReason(queued.taskId);
      return;
    }
    this.running += 1;
    task.whenSettled(() => {
      this.running -= 1;
      this.wake?.();
    });
    run(task, queued.request);
    // Registered now (run asked for the cancel kept meanwhile): later cancels reach it the usual way.
    this.store.cancelReason(queued.taskId);
  }

  /** Entries read by a worker that died before it took their task: after a lease time, another takes them. */
  private async claimAbandoned(run: (task: WrittenTask, request: SkillRequest) => void): Promise<void> {
    const free = this.options.maxConcurrentRuns - this.running;
    if (free <= 0 || this.stopped) return;
    const reply = (await this.store.redis.xautoclaim(this.key, GROUP, this.consumer, this.options.leaseMs, '0-0', 'COUNT', free)) as [string, [string, string[] | null][]];
    for (const [entryId, fields] of reply[1] ?? []) if (fields) await this.take(entryId, fields, run);
  }

  /** Tasks whose lease expired end FAILED (WORKER_LOST_MESSAGE), their open tools closed as failed. */
  private async reap(): Promise<void> {
    if (this.reaping) return;
    this.reaping = true;
    try {
      await this.failUntaken();
      for (const id of await this.store.expiredLeases(REAP_BATCH)) {
        const task = await this.store.takeOver(id, 'expired', 0);
        if (!task) continue;
        this.logger.warn(`task ${id}: ${WORKER_LOST_MESSAGE}`);
        task.fail(WORKER_LOST_MESSAGE);
        this.store.expire(id, this.options.taskTtlMs);
        this.options.ended?.(task);
      }
    } finally {
      this.reaping = false;
    }
  }

  /** Runs no worker took within queueTimeoutMs: their tasks end FAILED, and their entries leave the queue. */
  private async failUntaken(): Promise<void> {
    const { queueTimeoutMs, taskTtlMs } = this.options;
    const entries = (await this.queuedBefore(1, this.key, queueTimeoutMs, REAP_BATCH)) as [string, string[]][];
    for (const [entryId, fields] of entries) {
      const queued = parseRun(fields);
      // Only while still queued: a worker that took it meanwhile runs it.
      const task = queued && (await this.store.takeOver(queued.taskId, 'queued', 0));
      if (task) {
        const message = queueTimeoutMessage(queueTimeoutMs);
        this.logger.warn(`task ${task.id}: ${message}`);
        task.fail(message);
        this.store.expire(task.id, taskTtlMs);
        this.options.ended?.(task);
      }
      await this.done(1, this.key, GROUP, entryId);
    }
  }
}

function parseRun(fields: string[]): QueuedRun | undefined {
  try {
    const run = JSON.parse(fields[fields.indexOf('r') + 1] ?? 'null') as QueuedRun | null;
    if (run && typeof run.taskId === 'string' && typeof run.request?.correlationId === 'string') return run;
  } catch {
    // not a run: dropped below
  }
  return undefined;
}
