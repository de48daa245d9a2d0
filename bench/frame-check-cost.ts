/**
 * `node -r ts-node/register/transpile-only bench/frame-check-cost.ts <calls> [runs=1000] [reps=5]`
 *
 * What a task's bus binding does to each tool frame before the task sees it, alone: the
 * tool-call-v1 check (`checkToolCallFrame`, which returns a fresh frame of the known fields) and
 * the content guard (`TaskContentGuard.checkedFrame`: JSON-safe, capped, secrets redacted, or the frame
 * as it is when it already is), as `TaskBusBinding` calls them, with the server's settings (16
 * KiB per field, the default redaction list, no credentials). The frames are the bench
 * scenario's, made fresh as its executor makes them, `runs` runs taking turns (1,000: the
 * 1,000-stream row), `calls` tool calls each. Prints ns of CPU per frame (this process, user +
 * system) for each repetition after a warm-up of the same size.
 *
 * The count the load does not move is instructions: compile this file (with `../src` and
 * `./lib/scenario`) and run it under `valgrind --tool=cachegrind --cache-sim=no
 * --cachegrind-out-file=/dev/null node <compiled> <calls> 1000 1` at two sizes (e.g. 20 and
 * 120 calls); the difference of the `I refs` over the difference of frames is the instructions
 * per frame (start-up and the warm-up's compilation are the same in both, and cancel out).
 */
import { TaskContentGuard } from '../src/a2a/limits/task-content-guard';
import { checkToolCallFrame } from '../src/extensions/tool-call-v1';
import { completedFrame, startedFrame } from './lib/scenario';

/** 1 when the frame went on as the check made it (it is clean). */
function bindingWork(guard: TaskContentGuard, frame: unknown): number {
  const checked = checkToolCallFrame(frame);
  if (typeof checked === 'string') throw new Error(`frame-check-cost: a bench frame was rejected: ${checked}`);
  return guard.checkedFrame(checked) === checked ? 1 : 0;
}

function pass(guard: TaskContentGuard, calls: number, runs: number): number {
  let kept = 0;
  for (let i = 0; i < calls; i++) {
    for (let r = 0; r < runs; r++) kept += bindingWork(guard, startedFrame(i)) + bindingWork(guard, completedFrame(i));
  }
  return kept;
}

function main(): void {
  const [calls, runs = 1000, reps = 5] = process.argv.slice(2).map(Number);
  if (!(calls > 0 && runs > 0 && reps > 0)) throw new Error('usage: bench/frame-check-cost.ts <calls> [runs] [reps]');
  const guard = new TaskContentGuard({ maxFrameFieldBytes: 16 * 1024, auth: { apiKeys: [], bearerTokens: [] } });
  const frames = calls * runs * 2;
  // The bench's frames are clean: each goes on as the check made it (a copy would be another path).
  if (pass(guard, calls, runs) !== frames) throw new Error('frame-check-cost: the guard copied a clean frame');
  for (let rep = 0; rep < reps; rep++) {
    const cpu = process.cpuUsage();
    pass(guard, calls, runs);
    const used = process.cpuUsage(cpu);
    console.log(`frame-check-cost: ${runs} runs × ${calls} calls, ${(((used.user + used.system) * 1000) / frames).toFixed(1)} ns of CPU per frame`);
  }
}

main();
