/**
 * `node [--trace-gc-nvp] -r ts-node/register/transpile-only bench/runtime-path-cost.ts <streams> <calls> [reps=8] [--src=<checkout>]... [--heap]`
 *
 * The per-frame CPU of the runtime path alone, in-process: the bench's executor playing the
 * scenario (a tool call's started and completed frame per event-loop turn), the runtime, the
 * default bus on a RuntimeEmitter, the tool-call metrics and the task's bus binding (frame check
 * and content guard included) onto a stand-in TaskWriter that counts the frames. No HTTP, no task
 * record, no stream (bench/frame-path-cost.ts has those). Each repetition runs `streams` runs of
 * `calls` calls at once; `1000 100` is the 1,000-stream row's concurrency, `10 10000` the same
 * frames on ten runs (what concurrency costs per frame: each frame touches another run's
 * objects). With `--src=<checkout>` given more than once, each checkout's files are loaded side by
 * side in this one process and the repetitions alternate between them (min / median / max, and in
 * how many paired repetitions the second was lower); without, this checkout. Prints µs of CPU per
 * frame (this process, user + system); `--heap` instead the bytes allocated per frame, from V8's
 * sampling heap profile of each repetition (every 1 KiB on average, objects the GC took included:
 * a count the machine's load does not move).
 */
import { Session } from 'node:inspector';
import { resolve } from 'node:path';
import { inspectorPost as post } from './lib/inspector-post';

interface Side {
  src: string;
  rep(): Promise<number>;
}

interface SampledNode {
  selfSize: number;
  children: SampledNode[];
}

function sampledBytes(node: SampledNode): number {
  return node.children.reduce((sum, child) => sum + sampledBytes(child), node.selfSize);
}

/** The bytes `rep` allocates per frame, from a sampling heap profile of it. */
function allocatedPerFrame(session: Session, rep: () => Promise<number>, frames: number): () => Promise<number> {
  return async () => {
    await post(session, 'HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    await rep();
    const { profile } = await post<{ profile: { head: SampledNode } }>(session, 'HeapProfiler.stopSampling');
    return sampledBytes(profile.head) / frames;
  };
}

function side(src: string, streams: number, calls: number): Side {
  // Each checkout's own modules, side by side in this process.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const load = <T>(path: string): T => require(resolve(src, path)) as T;
  /* eslint-disable @typescript-eslint/no-explicit-any */
  const { AgentRuntimeService } = load<any>('src/runtime/agent-runtime.service');
  const { EventEmitterAgentBus } = load<any>('src/runtime/event-emitter-agent-bus');
  const { RuntimeEmitter } = load<any>('src/runtime/runtime-emitter');
  const { Narrator } = load<any>('src/runtime/narration');
  const { TaskBusBinding } = load<any>('src/a2a/task-bus-binding');
  const { TaskContentGuard } = load<any>('src/a2a/limits/task-content-guard');
  const { ToolstreamMetrics } = load<any>('src/metrics/toolstream-metrics.service');
  const { BenchAgentExecutor } = load<any>('bench/servers/bench-agent-executor');
  const { scenarioText } = load<any>('bench/lib/scenario');
  const bus = new EventEmitterAgentBus(new RuntimeEmitter());
  const runtime = new AgentRuntimeService(bus, new Narrator(), {}, new BenchAgentExecutor());
  runtime.onModuleInit();
  // The metrics as the app has them (one histogram observation per ended tool call), nothing exposed.
  const metrics = new ToolstreamMetrics(
    { path: false, auth: false, defaultMetrics: false, toolNames: ['bench_tool'], toolDurationBuckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] },
    {
      get: (token: unknown) => {
        if (token === AgentRuntimeService) return runtime;
        throw new Error('runtime-path-cost: only the runtime is provided');
      },
    },
  );
  metrics.logger.debug = () => undefined;
  metrics.onApplicationBootstrap();
  const binding = new TaskBusBinding(bus, new TaskContentGuard({ maxFrameFieldBytes: 16 * 1024, auth: { apiKeys: [], bearerTokens: [] } }));
  /* eslint-enable @typescript-eslint/no-explicit-any */
  const text = scenarioText({ toolCalls: calls, intervalMs: 0, idle: false });
  let frames = 0;
  let runs = 0;
  const run = (): Promise<void> =>
    new Promise((done) => {
      const id = `bench-run-${++runs}-${src.length}`;
      // bind() returns the function that ends the binding (an RxJS Subscription before round 21).
      let bound: (() => void) | { unsubscribe(): void } | undefined = undefined;
      const end = (): void => {
        if (typeof bound === 'function') bound();
        else bound?.unsubscribe();
        done();
      };
      const writer = { narrate: () => undefined, toolFrame: () => void (frames += 1), answer: () => undefined, complete: end, fail: end, cancel: end };
      bound = binding.bind(id, writer);
      bus.publishRequest({ correlationId: id, message: text });
    });
  return {
    src,
    rep: async () => {
      frames = 0;
      const cpu = process.cpuUsage();
      await Promise.all(Array.from({ length: streams }, run));
      const used = process.cpuUsage(cpu);
      if (frames !== streams * calls * 2 || runtime.activeRuns() !== 0 || binding.boundTasks !== 0) {
        throw new Error(`runtime-path-cost: ${frames} frames of ${streams * calls * 2}, ${runtime.activeRuns()} runs left`);
      }
      return (used.user + used.system) / frames;
    },
  };
}

function spread(values: number[]): string {
  const s = [...values].sort((a, b) => a - b);
  return `${s[0].toFixed(3)} / ${s[Math.floor((s.length - 1) / 2)].toFixed(3)} / ${s[s.length - 1].toFixed(3)}`;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const [streams, calls, reps = 8] = args.filter((a) => !a.startsWith('--')).map(Number);
  if (!(streams > 0 && calls > 0 && reps > 0)) throw new Error('usage: bench/runtime-path-cost.ts <streams> <calls> [reps] [--src=<checkout>]... [--heap]');
  const srcs = args.filter((a) => a.startsWith('--src=')).map((a) => resolve(a.slice('--src='.length)));
  let sides = (srcs.length ? srcs : [resolve(__dirname, '..')]).map((src) => side(src, streams, calls));
  const heap = args.includes('--heap');
  if (heap) {
    const session = new Session();
    session.connect();
    sides = sides.map((s) => ({ src: s.src, rep: allocatedPerFrame(session, s.rep, streams * calls * 2) }));
  }
  const unit = heap ? 'bytes allocated' : 'µs of CPU';
  for (let w = 0; w < 3; w++) for (const s of sides) await s.rep();
  const results = sides.map((): number[] => []);
  for (let r = 0; r < reps; r++) {
    const order = sides.map((_, i) => (r % 2 === 0 ? i : sides.length - 1 - i));
    for (const i of order) {
      console.log(`runtime-path-cost: rep ${r} ${sides[i].src}`);
      results[i].push(await sides[i].rep());
    }
  }
  sides.forEach((s, i) => console.log(`${s.src}: ${streams} × ${calls}, ${unit} per frame min / median / max ${spread(results[i])}`));
  if (sides.length === 2) console.log(`second lower in ${results[1].filter((b, r) => b < results[0][r]).length} of ${reps} paired repetitions`);
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
