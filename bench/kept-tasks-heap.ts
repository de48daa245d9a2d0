/**
 * `node --expose-gc -r ts-node/register/transpile-only bench/kept-tasks-heap.ts [tasks=1000] [kept=100] [events=200]`
 *
 * Heap the in-memory store holds once `tasks` finished tasks (`events` narration events each,
 * each task held and followed while it runs, as its stream does) have gone through it with
 * `maxRetainedTasks: kept`: what is left should be about `kept` tasks' worth, whatever `tasks`
 * is. A one-off check that nothing (a listing index, a queue, a conversation) keeps forgotten
 * tasks alive, and (`10000 10000 0`) what each of the default 10,000 kept empty tasks holds; run
 * it on a checkout with and without a change.
 */
import { InMemoryTaskStore } from '../src/a2a/store/in-memory-task-store';
import type { TaskRecord } from '../src/a2a/task-record';
import { emptyTaskMessage } from './lib/empty-task-message';

const TASKS = Number(process.argv[2] ?? 1_000);
const KEPT = Number(process.argv[3] ?? 100);
const EVENTS = Number(process.argv[4] ?? 200);

function heapAfterGc(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

async function main(): Promise<void> {
  const store = new InMemoryTaskStore({ maxEventsPerTask: 10_000, maxFinishedToolsPerTask: 100, maxRetainedTasks: KEPT, maxRetainedBytes: 256 * 1024 * 1024 });
  const base = heapAfterGc();
  const text = 'x'.repeat(200);
  for (let i = 0; i < TASKS; i++) {
    const id = `t${i}`;
    await store.claimMessage(undefined, `m-${id}`, id);
    const task = (await store.create({ id, contextId: `c${i}`, owner: undefined, message: emptyTaskMessage(id, ''), text: 'x' })) as TaskRecord;
    const release = task.hold(task.lastSeq);
    const stop = task.follow({ cursor: 0, push: () => undefined, overrun: () => undefined });
    for (let n = 0; n < EVENTS; n++) task.narrate(`step ${n} ${text}`);
    task.complete('done');
    stop();
    release();
    store.expire(id, 3_600_000);
  }
  const held = heapAfterGc() - base;
  console.log(`${(held / 1_048_576).toFixed(1)} MiB of heap held after ${TASKS} finished tasks of ${EVENTS} events, ${KEPT} kept (${(held / Math.min(KEPT, TASKS) / 1024).toFixed(2)} KiB per kept task)`);
  await store.close();
}

void main();
