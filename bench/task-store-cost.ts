/**
 * `node -r ts-node/register/transpile-only bench/task-store-cost.ts [tasks] [concurrent=1]`
 *
 * CPU of an empty task's life in the in-memory store, as the empty-task section drives it: its
 * message claimed, the task created, one status update, completed, expired with its TTL, while
 * the store keeps 10,000 finished tasks (its default), so each new one evicts the oldest and
 * the garbage collector's share of what the store keeps is counted too. With `concurrent` > 1,
 * that many tasks live at once and take their steps in turn, as streams running side by side do
 * (1,000: the 1,000-stream row's status changes, without its frames). A one-off check for
 * changes to the store's bookkeeping: run it on a checkout with and without the change,
 * alternating; under `node --trace-gc-nvp` the bytes its scavenges promote do not move with load.
 */
import { InMemoryTaskStore } from '../src/a2a/store/in-memory-task-store';
import type { TaskRecord } from '../src/a2a/task-record';
import { emptyTaskMessage } from './lib/empty-task-message';

const TASKS = Number(process.argv[2] ?? 100_000);
const CONCURRENT = Math.max(1, Number(process.argv[3] ?? 1));
const KEPT = 10_000;

async function main(): Promise<void> {
  const store = new InMemoryTaskStore({ maxEventsPerTask: 10_000, maxFinishedToolsPerTask: 100, maxRetainedTasks: KEPT, maxRetainedBytes: 256 * 1024 * 1024 });
  const start = async (i: number): Promise<TaskRecord> => {
    const id = `t${i}`;
    await store.claimMessage(undefined, `m-${id}`, id);
    return (await store.create({ id, contextId: `c${i}`, owner: undefined, message: emptyTaskMessage(id, ''), text: 'x' })) as TaskRecord;
  };
  // Each live task's next step: 0 narrates, 1 completes and expires it (and a new task takes its place).
  const lives = async (count: number, from: number): Promise<void> => {
    const live: TaskRecord[] = [];
    const steps: number[] = [];
    let next = from;
    const end = from + count;
    while (live.length < CONCURRENT && next < end) {
      live.push(await start(next++));
      steps.push(0);
    }
    for (let done = 0; done < count; ) {
      for (let slot = 0; slot < live.length; slot++) {
        const task = live[slot];
        if (task === undefined) continue;
        if (steps[slot] === 0) {
          task.narrate('thinking');
          steps[slot] = 1;
          continue;
        }
        task.complete('done');
        store.expire(task.id, 3_600_000);
        done += 1;
        if (next < end) {
          live[slot] = await start(next++);
          steps[slot] = 0;
        } else live[slot] = undefined as unknown as TaskRecord;
      }
    }
  };
  // Past the retention limit first, so every measured task evicts one.
  await lives(2 * KEPT, 0);
  const begin = process.cpuUsage();
  await lives(TASKS, 2 * KEPT);
  const used = process.cpuUsage(begin);
  console.log(
    `${((used.user + used.system) / TASKS).toFixed(2)} µs of CPU per empty task's life in the store (${TASKS} tasks, ${CONCURRENT} at once, ${KEPT} finished kept)`,
  );
  await store.close();
}

void main();
