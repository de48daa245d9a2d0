/**
 * Finished tasks kept by the in-memory store, made directly (no HTTP): what the probes that count
 * kept tasks (bench/kept-tasks-objects.ts, bench/kept-tasks-marking.ts) fill a store with.
 */
import { InMemoryTaskStore } from '../../src/a2a/store/in-memory-task-store';
import type { TaskRecord } from '../../src/a2a/task-record';
import { emptyTaskMessage } from './empty-task-message';
import { completedFrame, startedFrame } from './scenario';

/** A store that keeps `tasks` finished tasks, with room (events, bytes) for all of them. */
export function keepingStore(tasks: number): InMemoryTaskStore {
  return new InMemoryTaskStore({ maxEventsPerTask: 10_000, maxFinishedToolsPerTask: 100, maxRetainedTasks: tasks, maxRetainedBytes: 1024 * 1024 * 1024 });
}

/**
 * One task run to its end in `store`: `calls` tool calls (a started and a completed frame each),
 * then the answer, held and followed while it runs as its stream does, then kept for an hour.
 */
export async function runKeptTask(store: InMemoryTaskStore, id: string, contextId: string, calls: number): Promise<void> {
  await store.claimMessage(undefined, `m-${id}`, id);
  const task = (await store.create({ id, contextId, owner: undefined, message: emptyTaskMessage(id, contextId), text: 'x' })) as TaskRecord;
  const release = task.hold(task.lastSeq);
  const stop = task.follow({ cursor: 0, push: () => undefined, overrun: () => undefined });
  for (let n = 0; n < calls; n++) {
    task.toolFrame(startedFrame(n));
    task.toolFrame(completedFrame(n));
  }
  task.complete('done');
  stop();
  release();
  store.expire(id, 3_600_000);
}
