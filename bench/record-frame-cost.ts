/**
 * `node [--expose-gc --trace-gc-nvp] -r ts-node/register/transpile-only bench/record-frame-cost.ts [tasks=1000] [calls=100] [reps=5]`
 *
 * The task record's share of a frame, in-process and alone: `tasks` records made by the
 * in-memory store (as the server makes them: kept once settled, its default limits), each
 * followed by one listener that takes every event's SSE message (1.0, JSON-RPC framing) as a
 * stream does, and `calls` tool calls each (a started and a completed frame, the bench's
 * frames), the tasks' frames interleaved as `tasks` concurrent streams' are; then each task
 * completes. No HTTP, no runtime, no bus, no socket: what toolFrame, toolFrameEvent,
 * keepToolArtifact, commit, the log's append and the event's SSE message cost per frame.
 * Prints user+system CPU per frame for each repetition (min / median / max) and, with
 * `--expose-gc`, marks each measured repetition with a minor GC at both ends ("measure:start",
 * "measure:end") so that `--trace-gc-nvp`'s lines between them sum to the bytes it allocated
 * and promoted (a count the machine's load does not move). A one-off check for changes to
 * task-record.ts, task-event.ts, event-log.ts and the store: run it in two checkouts, alternating.
 */
import { sseMessageFraming, type TaskEvent } from '../src/a2a/task-event';
import type { TaskListener, TaskRecord } from '../src/a2a/task-record';
import { InMemoryTaskStore } from '../src/a2a/store/in-memory-task-store';
import { emptyTaskMessage } from './lib/empty-task-message';
import { completedFrame, startedFrame } from './lib/scenario';

const [TASKS = 1_000, CALLS = 100, REPS = 5] = process.argv
  .slice(2)
  .filter((a) => !a.startsWith('--'))
  .map(Number);

const framing = sseMessageFraming('\ndata: {"jsonrpc":"2.0","id":1,"result":', '}\n\n');
let written = 0;

/** A stream's part: every event's message, measured as a socket write measures it. */
function listener(): TaskListener {
  return {
    cursor: 0,
    push(event: TaskEvent) {
      written += Buffer.byteLength(event.sseMessage('1.0', framing));
    },
    overrun() {
      throw new Error('overrun');
    },
  };
}

const gc = (globalThis as { gc?: (options?: object) => void }).gc;
let taskNo = 0;

function run(): number {
  const store = new InMemoryTaskStore({ maxEventsPerTask: 10_000, maxFinishedToolsPerTask: 100, maxRetainedTasks: 10_000, maxRetainedBytes: 1 << 30 });
  const records: TaskRecord[] = [];
  for (let t = 0; t < TASKS; t++) {
    const id = `task-${++taskNo}`;
    const record = store.create({ id, contextId: `ctx-${taskNo}`, owner: undefined, message: emptyTaskMessage(id, `ctx-${taskNo}`), text: 'x' }) as unknown as TaskRecord;
    record.follow(listener());
    records.push(record);
  }
  const start = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) {
    for (const record of records) record.toolFrame(startedFrame(i));
    for (const record of records) record.toolFrame(completedFrame(i));
  }
  for (const record of records) record.complete('done');
  const used = process.cpuUsage(start);
  return (used.user + used.system) / (TASKS * CALLS * 2);
}

run();
const perFrame: number[] = [];
for (let rep = 0; rep < REPS; rep++) {
  gc?.({ type: 'minor' });
  console.log('measure:start');
  perFrame.push(run());
  gc?.({ type: 'minor' });
  console.log('measure:end');
}
const sorted = [...perFrame].sort((a, b) => a - b);
console.log(
  `${TASKS} tasks x ${CALLS} calls: ${sorted[0].toFixed(2)} / ${sorted[sorted.length >> 1].toFixed(2)} / ${sorted[sorted.length - 1].toFixed(2)} µs of CPU per frame (min / median / max of ${REPS}); ${TASKS * CALLS * 2} frames a repetition; ${written} bytes written`,
);
