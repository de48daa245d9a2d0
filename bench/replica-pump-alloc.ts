/**
 * `node --expose-gc --max-semi-space-size=64 --min-semi-space-size=64 -r ts-node/register/transpile-only bench/replica-pump-alloc.ts [frames=20000] [listeners=1] [batch=1]`
 *
 * Bytes of heap a RedisTaskReplica allocates to hand one stored batch to its streams (advance:
 * keepTail, a pump per listener, trimTail), as a paced stream's frame takes that path on the
 * writing instance (fedHere) and on the others (the PUBLISH). In process, with no Redis and no
 * sockets: the listeners only count what they get, so what is measured is the replica's own
 * work. The young generation is made large enough that no GC runs while the frames are handed
 * over (the run says so, or fails), so the figure is the heap's growth: a count, not a time.
 * Run it from `git archive` copies of two commits to compare them (it imports the copy's src).
 * `--sites`: a second counted run under V8's sampling heap profiler (a sample every 64 bytes)
 * prints the bytes per batch by the function that allocated them.
 */
import { Session } from 'node:inspector';
import { PerformanceObserver } from 'node:perf_hooks';
import { TaskState, type Task } from '@a2a-js/sdk';
import { TaskEvent } from '../src/a2a/task-event';
import type { TaskListener } from '../src/a2a/task-record';
import { RedisTaskReplica, type RedisTaskStore } from '../src/a2a/store/redis-task-store';

const [frames = 20_000, listenerCount = 1, batchSize = 1] = process.argv.slice(2).filter((arg) => !arg.startsWith('--')).map(Number);
const sites = process.argv.includes('--sites');
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

const store = { maxEventsPerTask: 1_000, watch: () => undefined, unwatch: () => undefined, countFollower: () => undefined, read: async () => [], restartPoint: async () => undefined };
const task: Task = { id: 't', contextId: 'c', history: [], artifacts: [], metadata: undefined, status: undefined };
const json = JSON.stringify({ artifactUpdate: { taskId: 't', contextId: 'c', artifact: { artifactId: 'a', parts: [{ text: 'x'.repeat(200) }] } } });

/** Hands `count` batches to a fresh replica with `listenerCount` streams; returns the events they got. */
function run(fedHere: boolean, count: number, events: TaskEvent[][]): number {
  const replica = new RedisTaskReplica(store as unknown as RedisTaskStore, {
    id: 't', contextId: 'c', owner: undefined, state: TaskState.TASK_STATE_WORKING, statusTime: 0, lastSeq: 0, newestSeq: 0, firstSeq: 1, snapshot: task,
  });
  replica.fedHere = fedHere;
  let got = 0;
  for (let i = 0; i < listenerCount; i++) {
    const listener: TaskListener = { cursor: 0, push: () => void got++, ready: () => true, overrun: () => { throw new Error('overrun'); } };
    replica.follow(listener);
  }
  for (let i = 0; i < count; i++) {
    const batch = events[i];
    replica.advance(batch[batch.length - 1].seq, TaskState.TASK_STATE_WORKING, batch);
  }
  return got;
}

function batches(count: number): TaskEvent[][] {
  const all: TaskEvent[][] = [];
  for (let i = 0; i < count; i++) all.push(Array.from({ length: batchSize }, (_, j) => new TaskEvent(i * batchSize + j + 1, json, true)));
  return all;
}

let gcs = 0;
new PerformanceObserver((list) => (gcs += list.getEntries().length)).observe({ entryTypes: ['gc'] });

interface AllocationNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: AllocationNode[];
}

/** The counted run again under the sampling heap profiler: bytes per batch by allocating function. */
function bySite(fedHere: boolean, events: TaskEvent[][]): void {
  const session = new Session();
  session.connect();
  session.post('HeapProfiler.startSampling', { samplingInterval: 64, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  run(fedHere, frames, events);
  session.post('HeapProfiler.stopSampling', (err, result) => {
    if (err) throw err;
    const totals = new Map<string, number>();
    const walk = (node: AllocationNode): void => {
      if (node.selfSize > 0) {
        const { functionName, url, lineNumber } = node.callFrame;
        const site = `${functionName || '(anonymous)'} ${url.slice(url.lastIndexOf('/') + 1)}:${lineNumber + 1}`;
        totals.set(site, (totals.get(site) ?? 0) + node.selfSize);
      }
      for (const child of node.children) walk(child);
    };
    walk((result as unknown as { profile: { head: AllocationNode } }).profile.head);
    const top = [...totals].sort((a, b) => b[1] - a[1]).slice(0, 8);
    console.log(`  by site: ${top.map(([site, bytes]) => `${site} ${(bytes / frames).toFixed(0)}`).join(', ')}`);
    session.disconnect();
  });
}

for (const fedHere of [true, false]) {
  // Warm-up: the code is optimised before the counted run.
  for (let i = 0; i < 5; i++) run(fedHere, frames, batches(frames));
  const events = batches(frames);
  gc();
  gc();
  const gcsBefore = gcs;
  const before = process.memoryUsage().heapUsed;
  const got = run(fedHere, frames, events);
  const after = process.memoryUsage().heapUsed;
  // The observer is told of a GC asynchronously: look once this turn is over.
  setImmediate(() => {
    if (gcs !== gcsBefore) throw new Error(`a GC ran during the counted run (${gcs - gcsBefore}): give a larger --max-semi-space-size or fewer frames`);
    if (got !== frames * batchSize * listenerCount) throw new Error(`listeners got ${got} events, expected ${frames * batchSize * listenerCount}`);
    console.log(`${fedHere ? 'writing instance (fedHere)' : 'other instance (PUBLISH)'}: ${listenerCount} listener(s), batches of ${batchSize}: ${((after - before) / frames).toFixed(1)} B of heap per batch over ${frames}`);
    if (sites) bySite(fedHere, batches(frames));
  });
}
