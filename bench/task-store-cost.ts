/**
 * `node -r ts-node/register/transpile-only bench/task-store-cost.ts [tasks]`
 *
 * CPU of an empty task's life in the in-memory store, as the empty-task section drives it: its
 * message claimed, the task created, one status update, completed, expired with its TTL, while
 * the store keeps 10,000 finished tasks (its default), so each new one evicts the oldest and
 * the garbage collector's share of what the store keeps is counted too. A one-off check for
 * changes to the store's bookkeeping: run it on a checkout with and without the change, alternating.
 */
import { InMemoryTaskStore } from '../src/a2a/store/in-memory-task-store';
import type { TaskRecord } from '../src/a2a/task-record';
import { emptyTaskMessage } from './lib/empty-task-message';

const TASKS = Number(process.argv[2] ?? 100_000);
const KEPT = 10_000;

async function main(): Promise<void> {
  const store = new InMemoryTaskStore({ maxEventsPerTask: 10_000, maxFinishedToolsPerTask: 100, maxRetainedTasks: KEPT, maxRetainedBytes: 256 * 1024 * 1024 });
  const lives = async (count: number, from: number): Promise<void> => {
    for (let i = from; i < from + count; i++) {
      const id = `t${i}`;
      await store.claimMessage(undefined, `m-${id}`, id);
      const task = (await store.create({ id, contextId: `c${i}`, owner: undefined, message: emptyTaskMessage(id, ''), text: 'x' })) as TaskRecord;
      task.narrate('thinking');
      task.complete('done');
      store.expire(id, 3_600_000);
    }
  };
  // Past the retention limit first, so every measured task evicts one.
  await lives(2 * KEPT, 0);
  const start = process.cpuUsage();
  await lives(TASKS, 2 * KEPT);
  const used = process.cpuUsage(start);
  console.log(`${((used.user + used.system) / TASKS).toFixed(2)} µs of CPU per empty task's life in the store (${TASKS} tasks, ${KEPT} finished kept)`);
  await store.close();
}

void main();
