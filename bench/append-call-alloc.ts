/**
 * `node -r ts-node/register/transpile-only bench/append-call-alloc.ts [calls=20000] [events=1] [runs=3] [--appender]`
 *
 * Heap the instance allocates per append call as a paced stream makes it: the payload written
 * (encodeAppend), the EVALSHA sent through ioredis (ShaScript.call) and its reply taken, one call
 * in flight at a time, `events` events of ~300 B JSON per call, on a redis-server of its own.
 * Prints per run the bytes allocated per call (V8's sampling heap profiler, one sample every
 * 64 B, counting what was collected since too) in all and by the functions that allocated most,
 * and Redis's EVALSHA µs per call (INFO commandstats). Only the call's own path is counted, not
 * the appender's bookkeeping nor the replica's hand-over (bench/replica-pump-alloc.ts). Run it
 * from `git archive` copies of two commits, taking turns (it imports the copy's src).
 * `--appender`: each call is a tool frame written by a task (TaskRecord) through a
 * RedisTaskAppender wired as the store wires it (its turn's writes corked, its sends deferred
 * together), the next frame once the last is stored, as a paced stream's; `events` is then 1.
 * This counts the record's frame, the appender's bookkeeping and the turn's microtasks too.
 */
import { Session } from 'node:inspector';
import { loadavg } from 'node:os';
import Redis from 'ioredis';
import { Role } from '@a2a-js/sdk';
import { TaskEvent } from '../src/a2a/task-event';
import { TaskRecord, textPart } from '../src/a2a/task-record';
import { RedisTaskAppender } from '../src/a2a/store/redis-task-appender';
import { RedisTurnWrites } from '../src/a2a/store/redis-turn-writes';
import { APPEND_SCRIPT, appendTaskPart, encodeAppend, type AppendHead } from '../src/a2a/store/redis-task-appender';
import { ShaScript } from '../src/a2a/store/redis-scripts';
import { allocationSites, type AllocationNode } from './lib/allocation-sites';
import { startRedis } from '../test/support/redis-server';
import { inspectorPost as post } from './lib/inspector-post';

const [calls = 20_000, perCall = 1, runs = 3] = process.argv.slice(2).filter((arg) => !arg.startsWith('--')).map(Number);
const throughAppender = process.argv.includes('--appender');

async function main(): Promise<void> {
  const server = await startRedis();
  // A failed run stops its redis-server too (it would outlive this process).
  process.once('uncaughtException', (err) => void server.stop().finally(() => { console.error(err); process.exit(1); }));
  // As the store's own connection is made (src/a2a/store/create-task-store.ts): ioredis arms its commandTimeout on every command.
  const redis = new Redis(server.url, { maxRetriesPerRequest: 1, commandTimeout: 5_000 });
  const script = new ShaScript(redis, APPEND_SCRIPT, 3);
  const keys = ['toolstream:task:t', 'toolstream:events:t', 'toolstream:owner:o'].map((key) => Buffer.from(key));
  const taskPart = appendTaskPart('lease-1', 'toolstream:channel:t');
  const json = JSON.stringify({ artifactUpdate: { taskId: 't', contextId: 'c', artifact: { artifactId: 'a', parts: [{ text: 'x'.repeat(200) }] } } });
  let seq = 0;
  const appendOnce = async (): Promise<void> => {
    const batch = Array.from({ length: perCall }, () => new TaskEvent(++seq, json, true));
    const head: AppendHead = { maxlen: 1_000, state: 'TASK_STATE_WORKING', statusTime: 1_000, lastSeq: seq, ttlMs: 0, publish: true, member: false, snapshot: false, answer: false };
    if ((await script.call(keys, [encodeAppend(head, taskPart, batch)])) !== 1) throw new Error('the append was refused');
  };
  await redis.script('LOAD', APPEND_SCRIPT);
  await redis.hset('toolstream:task:t', { lease: 'lease-1', lastSeq: '0' });
  const once = throughAppender ? taskWriter(redis, script) : appendOnce;
  // Warm-up: the path optimised before the counted runs.
  for (let i = 0; i < calls; i++) await once();
  const session = new Session();
  session.connect();
  for (let run = 0; run < runs; run++) {
    await redis.config('RESETSTAT');
    await post(session, 'HeapProfiler.startSampling', { samplingInterval: 64, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    for (let i = 0; i < calls; i++) await once();
    const { profile } = await post<{ profile: { head: AllocationNode } }>(session, 'HeapProfiler.stopSampling');
    const { total, top } = allocationSites(profile.head);
    const stats = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(await redis.info('commandstats'));
    const usec = stats ? Number(stats[2]) / Number(stats[1]) : NaN;
    console.log(
      `run ${run}: ${(total / calls).toFixed(0)} B per call (${top.map(([site, bytes]) => `${site} ${(bytes / calls).toFixed(0)}`).join(', ')}); evalsha ${usec.toFixed(1)} µs per call; load ${loadavg()[0].toFixed(1)}`,
    );
  }
  session.disconnect();
  redis.disconnect();
  await server.stop();
}

/** A task whose tool frames go to Redis through an appender wired as RedisTaskStore wires it; each call writes one and resolves once it is stored. */
function taskWriter(redis: Redis, script: ShaScript): () => Promise<void> {
  const turnWrites = new RedisTurnWrites(redis);
  let stored: (() => void) | undefined;
  const appender = new RedisTaskAppender({
    lease: 'lease-1',
    keys: ['toolstream:task:t', 'toolstream:events:t', 'toolstream:owner:o'],
    channel: 'toolstream:channel:t',
    ownerMember: 't',
    maxEventsPerTask: 1_000,
    runningTtlMs: 60_000,
    append: (keys, args) => {
      turnWrites.cork();
      return script.call(keys, args) as Promise<number>;
    },
    afterFailure: (err) => script.loaded(err),
    defer: (send) => turnWrites.defer(send),
    later: (send) => turnWrites.later(send),
    // A paced stream writes less often than the gap: no call waits for it.
    minCallGapMs: 0,
    warn: (message) => console.warn(message),
    onOverflow: (reason) => {
      throw new Error(reason);
    },
    onStored: () => {
      const done = stored;
      stored = undefined;
      done?.();
    },
  });
  const message = { messageId: 'm', contextId: 'c', taskId: 't', role: Role.ROLE_USER, parts: [textPart('hi')], metadata: undefined, extensions: [], referenceTaskIds: [] };
  const record = new TaskRecord({ id: 't', contextId: 'c', owner: undefined, message, text: 'hi', maxEvents: 1, maxFinishedTools: 10, onEvent: (event) => appender.enqueue(event) });
  appender.record = record;
  const args = { query: 'x'.repeat(100) };
  const result = { text: 'y'.repeat(150) };
  let frame = 0;
  return () =>
    new Promise<void>((resolve) => {
      stored = resolve;
      const n = frame++;
      const toolCallId = `c${n >> 1}`;
      if (n % 2 === 0) record.toolFrame({ toolCallId, name: 'search', phase: 'started', args });
      else record.toolFrame({ toolCallId, name: 'search', phase: 'completed', result });
    });
}

void main();
