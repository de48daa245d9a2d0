/**
 * `node -r ts-node/register/transpile-only bench/profile-stages.ts <file.cpuprofile> <frames>`
 *
 * Where a frame went, by stage, in a CPU profile of the streaming cases (`npm run bench:profile
 * -- streams`, the raw profile under bench/.work/profiles): each sample goes to the first of
 * - `writev` (the socket's write, and Node's writevGeneric around it), the collector;
 * - the runtime's handling of a published frame (anything under a Run's `_next`), split by the
 *   innermost file of the path it was in: runtime, bus, binding, frame check, content guard,
 *   task record, stream, response writer, metrics, Node;
 * - the stream's turn flush (`flushTurn`), the bench scenario, everything else (the per-task
 *   request path, timers).
 * `<frames>`: the frames the profiled load carried (the profile's header says how many per
 * task), to print µs per frame. Inlined functions show in the stacks as V8 records them.
 */
import { readFileSync } from 'node:fs';
import type { CpuProfile } from './profile-summary';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

/** The runtime path's parts, by the file a sample's innermost frame of the path is in. */
const PARTS: ReadonlyArray<[string, RegExp]> = [
  ['runtime', /src\/runtime\/(agent-runtime\.service|frame-spans|narration)/],
  ['bus', /src\/runtime\/(event-emitter-agent-bus|runtime-emitter|agent-bus)/],
  ['binding', /src\/a2a\/task-bus-binding/],
  ['frame check', /src\/extensions\//],
  ['content guard', /src\/a2a\/limits\/|src\/executor\/frames\//],
  ['task record', /src\/a2a\/(task-record|task-event|event-log|store\/)/],
  ['stream', /src\/a2a\/task-stream/],
  ['response writer', /src\/a2a\/sse-framing/],
  ['metrics', /src\/metrics\//],
  ['rxjs', /node_modules\/rxjs\//],
];

export function profileStages(profile: CpuProfile): Map<string, number> {
  const nodes = profile.nodes as Node[];
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stageOf = new Map<number, string>();
  const classify = (leaf: Node): string => {
    const { functionName, url } = leaf.callFrame;
    if (functionName === '(idle)' || functionName === '(program)') return functionName;
    if (functionName === '(garbage collector)') return 'collector';
    const stack: Node[] = [];
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) stack.push(byId.get(id)!);
    if (stack.some((n) => n.callFrame.url === 'node:inspector')) return '(profiler)';
    if (functionName === 'writev' || (functionName === 'writevGeneric' && url.includes('stream_base_commons'))) return 'writev';
    const run = stack.findIndex((n) => n.callFrame.functionName === '_next' && n.callFrame.url.includes('src/runtime/agent-runtime.service'));
    if (run >= 0) {
      // Innermost first: the stack runs leaf to root.
      for (let i = 0; i <= run; i++) {
        const part = PARTS.find(([, re]) => re.test(stack[i].callFrame.url));
        if (part) return `path: ${part[0]}`;
      }
      return 'path: (node, native)';
    }
    if (stack.some((n) => n.callFrame.functionName === 'flushTurn')) return 'turn flush';
    if (stack.some((n) => n.callFrame.url.includes('bench/lib/scenario'))) return 'scenario';
    return 'other (request path, timers, …)';
  };
  const byStage = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    let stage = stageOf.get(id);
    if (stage === undefined) stageOf.set(id, (stage = classify(byId.get(id)!)));
    byStage.set(stage, (byStage.get(stage) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return byStage;
}

if (require.main === module) {
  const [file, framesArg] = process.argv.slice(2);
  const frames = Number(framesArg);
  if (!file || !(frames > 0)) throw new Error('usage: bench/profile-stages.ts <file.cpuprofile> <frames>');
  const stages = profileStages(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
  const busy = [...stages].filter(([s]) => !s.startsWith('(idle') && s !== '(profiler)').reduce((sum, [, us]) => sum + us, 0);
  console.log(`| stage | µs per frame | share |\n| --- | --- | --- |`);
  for (const [stage, us] of [...stages].sort((a, b) => b[1] - a[1])) {
    if (stage === '(idle)' || stage === '(profiler)') continue;
    console.log(`| ${stage} | ${(us / frames).toFixed(2)} | ${((100 * us) / busy).toFixed(1)} % |`);
  }
  console.log(`| all sampled | ${(busy / frames).toFixed(2)} | |`);
}
