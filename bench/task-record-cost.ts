/**
 * `node -r ts-node/register/transpile-only bench/task-record-cost.ts`
 *
 * CPU of creating one task's record (TaskRecord: its Task event serialised, its log, status and
 * collections) with 10,000 records kept alive, as the in-memory store keeps 10,000 finished
 * tasks by default, so the garbage collector's share is counted too. A one-off check for
 * changes to task creation: run it on a checkout with and without the change, alternating.
 */
import { TaskRecord } from '../src/a2a/task-record';
import { emptyTaskMessage } from './lib/empty-task-message';

const RECORDS = 200_000;
const KEPT = 10_000;

let kept: TaskRecord[] = [];
const start = process.cpuUsage();
for (let i = 0; i < RECORDS; i++) {
  const id = `t${i}`;
  kept.push(new TaskRecord({ id, contextId: 'c', owner: undefined, message: emptyTaskMessage(id, 'c'), text: 'x', maxEvents: 10_000, maxFinishedTools: 100 }));
  if (kept.length > KEPT) kept = [];
}
const used = process.cpuUsage(start);
console.log(`${((used.user + used.system) / RECORDS).toFixed(2)} µs of CPU per TaskRecord created (${RECORDS} created, up to ${KEPT} kept alive)`);
