/**
 * `node -r ts-node/register/transpile-only bench/perf-stages.ts <perf.data> <units> [top=4] [--hz=4999]`
 *
 * An empty task's CPU by the stage of toolstream's request path it went to, from a `perf record`
 * with call chains (`--perf=FILE,g` of bench/empty-task-gc.ts, node with `--perf-basic-prof`; run
 * bench/perf-map-newest.ts on the map file first). Each sample goes to one stage, in µs per unit
 * (the tasks the recording covered): under the response's `end` (Node's write and the kernel's,
 * whoever called it), under a scavenge, else the innermost frame that names a stage, by its
 * file: the body read, the controller, a2a.service, task.service, the runtime, the bus, the
 * executor (the bench's), the task record and its events, the store, the stream, the rest of
 * src/; the limit's handler (bench/servers/limit-server) when the target is the limit or the
 * floor; Nest and Express outside src/; "(none)" for the rest (connections, the HTTP parser,
 * the event loop, other threads). A stage includes what Node, V8 and the packages do for it
 * (a `JSON.parse` under the body read is the body read's). Under each stage, its `top`
 * functions (the innermost frame of the stage) by their samples, with what they called most.
 * Record toolstream and `--target=floor` the same way and compare: the floor is the limit's
 * handler in Nest and Express, so its "limit handler" is what toolstream's stages replace.
 */
import { perfCallChains } from './lib/perf-samples';

/** Stages by a piece of a frame's name, the first that matches; the innermost frame naming one decides. */
const STAGES: [stage: string, piece: string][] = [
  ['store', 'src/a2a/store/'],
  ['record, log, events', 'src/a2a/task-record.'],
  ['record, log, events', 'src/a2a/task-event.'],
  ['record, log, events', 'src/a2a/event-log.'],
  ['bus', 'src/runtime/event-emitter-agent-bus.'],
  ['bus', 'src/runtime/runtime-emitter.'],
  ['bus', 'src/a2a/task-bus-binding.'],
  ['executor (the bench\'s)', 'bench/servers/bench-agent-executor.'],
  ['executor (the bench\'s)', 'bench/lib/scenario.'],
  ['runtime', 'src/runtime/'],
  ['stream', 'src/a2a/streams/'],
  ['stream', 'src/a2a/task-stream.'],
  ['stream', 'src/a2a/sse-framing.'],
  ['task.service', 'src/a2a/task.service.'],
  ['a2a.service', 'src/a2a/a2a.service.'],
  ['a2a.service', 'src/a2a/a2a-call-context.'],
  ['controller', 'src/a2a/a2a-json-rpc.controller.'],
  ['body read', 'src/a2a/a2a-json-body.middleware.'],
  ['other src/', 'src/'],
  ['limit handler', 'bench/servers/limit-server.'],
  ['Nest, Express', '@nestjs/'],
  ['Nest, Express', 'router/'],
  ['Nest, Express', 'express/'],
];
const END = 'end node:_http_outgoing';
const SCAVENGE = /Scaveng/;

/** A sample's stage, and the frame (innermost first) that named it; -1 when none did. */
function stageOf(frames: string[]): { stage: string; at: number } {
  if (frames.some((f) => f.includes(END))) return { stage: 'response end (write, kernel)', at: -1 };
  if (frames.some((f) => SCAVENGE.test(f))) return { stage: 'scavenge', at: -1 };
  for (let i = 0; i < frames.length; i++) {
    if (!frames[i].startsWith('JS:')) continue;
    const hit = STAGES.find(([, piece]) => frames[i].includes(piece));
    if (hit) return { stage: hit[0], at: i };
  }
  return { stage: '(none)', at: -1 };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  const [file, unitsText, topText] = args;
  if (!file || !unitsText) throw new Error('usage: perf-stages.ts <perf.data> <units> [top] [--hz=4999]');
  const units = Number(unitsText);
  const top = Number(topText ?? 4);
  const hz = Number(process.argv.find((a) => a.startsWith('--hz='))?.slice(5) ?? 4999);
  const stages = new Map<string, { count: number; functions: Map<string, { count: number; callees: Map<string, number> }> }>();
  let samples = 0;
  for await (const frames of perfCallChains(file)) {
    samples += 1;
    const { stage, at } = stageOf(frames);
    let entry = stages.get(stage);
    if (!entry) stages.set(stage, (entry = { count: 0, functions: new Map() }));
    entry.count += 1;
    if (at < 0) continue;
    const name = frames[at];
    let fn = entry.functions.get(name);
    if (!fn) entry.functions.set(name, (fn = { count: 0, callees: new Map() }));
    fn.count += 1;
    const callee = at === 0 ? '(itself)' : frames[at - 1];
    fn.callees.set(callee, (fn.callees.get(callee) ?? 0) + 1);
  }
  const us = (count: number): string => ((count / hz / units) * 1e6).toFixed(1).padStart(7);
  console.log(`${us(samples)}  µs per unit sampled (${samples} samples, ${units} units, ${hz} Hz)`);
  for (const [stage, { count, functions }] of [...stages].sort((a, b) => b[1].count - a[1].count)) {
    console.log(`${us(count)}  ${stage}`);
    for (const [name, fn] of [...functions].sort((a, b) => b[1].count - a[1].count).slice(0, top)) {
      const [callee, calls] = [...fn.callees].sort((a, b) => b[1] - a[1])[0];
      console.log(`   ${us(fn.count)}  ${name}  (most in ${callee}: ${us(calls).trim()})`);
    }
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
