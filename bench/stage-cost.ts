/**
 * `node bench/.work/stage/bench/stage-cost.js <stage> <streams> <calls> [--warm=<calls>]` (compiled; see below)
 *
 * A frame's path in stages, in-process, for an instruction count of each stage: `streams` runs of
 * `calls` tool calls at once (a started and a completed frame per event-loop turn, as
 * bench/lib/scenario.ts plays them), after one warm-up pass of `--warm` calls (default 10). Each
 * stage is the one before it plus one part of the server's path:
 * - `play`: the scenario played alone, each frame counted (what both servers share);
 * - `exec`: + the bench's executor (its Observable) into a bare RxJS Subscriber;
 * - `runtime`: + the runtime and the default bus (a RuntimeEmitter), onto counting topic handlers;
 * - `binding`: + the task's bus binding (frame check, content guard) onto a stand-in writer;
 * - `metrics`: + the tool-call metrics (ToolstreamMetrics' observation per ended call);
 * - `record`: + the task record the in-memory store makes, one follower that takes every event;
 * - `writer`: + the stream instead of that follower (followTask, the JSON-RPC TaskSseStream and
 *   its ResponseWriter) onto a stand-in response that measures and copies each chunk;
 * - `limit`: the limit's whole per-frame path (bench/servers/limit-server.ts's send) onto the same
 *   stand-in response.
 * The count the load does not move is instructions: compile it (a tsconfig extending
 * bench/tsconfig.children.json with this file) and run `valgrind --tool=cachegrind --cache-sim=no
 * --cachegrind-out-file=/dev/null node --single-threaded <compiled> <stage> 1000 <calls>` at two
 * sizes (e.g. 20 and 60 calls): the difference of the `I refs` over the difference of frames is
 * the stage's instructions per frame (start-up and the warm-up cancel out); one stage's less the
 * stage before it is that part's. Prints the frames and the CPU they took (not comparable under
 * valgrind).
 *
 * Cache misses the same way (round 28): `--cache-sim=yes --D1=49152,12,64 --LL=8388608,16,64`
 * (this VM's L1d; an LL of 8 MB, where bench/random-load-latency.ts's dependent loads turn slow:
 * `getconf` reports an L3 of ~508 MB, associativity 0, which valgrind would take), and
 * `cg_diff` of the two sizes' outputs for the functions (the JIT code is one `???` there; run
 * callgrind with `--dump-instr=yes` and node's `--perf-basic-prof` to name it from
 * /tmp/perf-<pid>.map). Valgrind has no TLB: the same run with 4 KiB lines, `--D1=393216,96,4096
 * --LL=16777216,16,4096 --I1=262144,64,4096`, counts misses of a 96-entry L1 and a 4,096-entry
 * L2 TLB (Zen 5's sizes; this VM reports an AMD EPYC with a 48 KB L1d and a 1 MB L2).
 */
import { randomUUID } from 'node:crypto';
import { Subscriber } from 'rxjs';
import { AgentRuntimeService } from '../src/runtime/agent-runtime.service';
import { EventEmitterAgentBus } from '../src/runtime/event-emitter-agent-bus';
import { RuntimeEmitter } from '../src/runtime/runtime-emitter';
import { Narrator } from '../src/runtime/narration';
import { TaskBusBinding } from '../src/a2a/task-bus-binding';
import { TaskContentGuard } from '../src/a2a/limits/task-content-guard';
import { ToolstreamMetrics } from '../src/metrics/toolstream-metrics.service';
import { InMemoryTaskStore } from '../src/a2a/store/in-memory-task-store';
import type { TaskListener } from '../src/a2a/task-record';
import { ResponseWriter, TaskSseStream } from '../src/a2a/sse-framing';
import { followTask } from '../src/a2a/task-stream';
import type { ExecutorEvent } from '../src/executor/executor.types';
import { TOOL_CALL_V1_ARTIFACT_NAME, TOOL_CALL_V1_MIME_TYPE, TOOL_CALL_V1_PART_MEDIA_TYPE, type ToolCallArtifactData } from '../src/extensions/tool-call-v1';
import { BenchAgentExecutor } from './servers/bench-agent-executor';
import { playScenario, scenarioText, type Scenario } from './lib/scenario';
import { emptyTaskMessage } from './lib/empty-task-message';
import { fakeResponse } from './lib/fake-response';

const STAGES = ['play', 'exec', 'runtime', 'binding', 'metrics', 'record', 'writer', 'limit'] as const;
type Stage = (typeof STAGES)[number];

let frames = 0;

/** One run of the stage, resolved when it is done. */
type RunOnce = (no: number, calls: number) => Promise<void>;

class CountingSubscriber extends Subscriber<ExecutorEvent> {
  constructor(private readonly done: () => void) {
    super();
  }
  protected override _next(event: ExecutorEvent): void {
    if (event.type === 'toolFrame') frames += 1;
  }
  protected override _complete(): void {
    this.done();
    this.unsubscribe();
  }
}

function stage(name: Stage): RunOnce {
  const scenario = (calls: number): Scenario => ({ toolCalls: calls, intervalMs: 0, idle: false });
  if (name === 'play') return (_no, calls) => playScenario(scenario(calls), () => void (frames += 1), new AbortController().signal);
  if (name === 'limit') {
    return async (no, calls) => {
      const res = fakeResponse();
      const taskId = randomUUID();
      const contextId = randomUUID();
      let eventId = 0;
      const send = (result: object): void => {
        res.write(`id: ${++eventId}\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: no, result })}\n\n`);
      };
      await playScenario(
        scenario(calls),
        (frame: ToolCallArtifactData) => {
          frames += 1;
          send({
            artifactUpdate: {
              taskId,
              contextId,
              artifact: {
                artifactId: randomUUID(),
                name: TOOL_CALL_V1_ARTIFACT_NAME,
                parts: [{ data: frame, metadata: { mimeType: TOOL_CALL_V1_MIME_TYPE }, mediaType: TOOL_CALL_V1_PART_MEDIA_TYPE }],
              },
            },
          });
        },
        new AbortController().signal,
      );
    };
  }
  const executor = new BenchAgentExecutor();
  if (name === 'exec') {
    return (_no, calls) =>
      new Promise<void>((done) => {
        const controller = new AbortController();
        executor.run(scenarioText(scenario(calls)), { correlationId: 'x', signal: controller.signal, controller }).subscribe(new CountingSubscriber(done));
      });
  }
  const bus = new EventEmitterAgentBus(new RuntimeEmitter());
  const runtime = new AgentRuntimeService(bus, new Narrator(), {}, executor);
  runtime.onModuleInit();
  if (name === 'runtime') {
    return (no, calls) =>
      new Promise<void>((done) => {
        const id = `run-${no}`;
        const stop = bus.listenTask(id, {
          progress: () => undefined,
          toolframe: () => void (frames += 1),
          answer: () => undefined,
          reply: () => {
            stop();
            done();
          },
        });
        bus.publishRequest({ correlationId: id, message: scenarioText(scenario(calls)) });
      });
  }
  if (name !== 'binding') {
    const metrics = new ToolstreamMetrics(
      { path: false, auth: false, defaultMetrics: false, toolNames: ['bench_tool'], toolDurationBuckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] },
      {
        get: (token: unknown) => {
          if (token === AgentRuntimeService) return runtime;
          throw new Error('stage-cost: only the runtime is provided');
        },
      } as never,
    );
    (metrics as unknown as { logger: { debug: () => void } }).logger.debug = () => undefined;
    metrics.onApplicationBootstrap();
  }
  const binding = new TaskBusBinding(bus, new TaskContentGuard({ maxFrameFieldBytes: 16 * 1024, auth: { apiKeys: [], bearerTokens: [] } }));
  if (name === 'binding' || name === 'metrics') {
    return (no, calls) =>
      new Promise<void>((done) => {
        const id = `run-${no}`;
        let unbind: (() => void) | undefined = undefined;
        const end = (): void => {
          unbind?.();
          done();
        };
        const writer = { narrate: () => undefined, toolFrame: () => void (frames += 1), answer: () => undefined, complete: end, fail: end, cancel: end };
        unbind = binding.bind(id, writer as never);
        bus.publishRequest({ correlationId: id, message: scenarioText(scenario(calls)) });
      });
  }
  const store = new InMemoryTaskStore({ maxEventsPerTask: 10_000, maxFinishedToolsPerTask: 100, maxRetainedTasks: 10_000, maxRetainedBytes: 1 << 30 });
  return (no, calls) =>
    new Promise<void>((done) => {
      const id = `task-${no}-0123456789abcdef`;
      const contextId = `ctx-${no}-0123456789abcdef`;
      const record = store.create({ id, contextId, owner: undefined, message: emptyTaskMessage(id, contextId), text: 'x' });
      const unbind = binding.bind(id, record);
      record.whenSettled(() => {
        unbind();
        frames += 2 * calls;
        setImmediate(done);
      });
      if (name === 'record') {
        const listener: TaskListener = { cursor: 0, push: () => undefined, overrun: () => { throw new Error('overrun'); } };
        record.follow(listener);
      } else {
        const response = fakeResponse();
        const writer = new ResponseWriter(response);
        const events = followTask(record, { toolFrames: true, pace: writer }, { open: 0 });
        new TaskSseStream(events, '1.0', { binding: 'jsonrpc', requestId: no }, 15_000, () => false, writer).writeTo(response, (err) => {
          throw err;
        });
      }
      bus.publishRequest({ correlationId: id, message: scenarioText(scenario(calls)) });
    });
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const [name, ...sizes] = args.filter((a) => !a.startsWith('--'));
  const [streams, calls] = sizes.map(Number);
  const warm = Number(args.find((a) => a.startsWith('--warm='))?.slice('--warm='.length) ?? 10);
  if (!STAGES.includes(name as Stage) || !(streams > 0 && calls > 0)) throw new Error(`usage: stage-cost.js <${STAGES.join('|')}> <streams> <calls> [--warm=<calls>]`);
  const run = stage(name as Stage);
  let no = 0;
  const pass = (n: number): Promise<void[]> => Promise.all(Array.from({ length: streams }, () => run(++no, n)));
  await pass(warm);
  frames = 0;
  const cpu = process.cpuUsage();
  await pass(calls);
  const used = process.cpuUsage(cpu);
  if (frames !== streams * calls * 2) throw new Error(`stage-cost: ${frames} frames of ${streams * calls * 2}`);
  console.log(`stage-cost: ${name} ${streams} × ${calls}: ${frames} frames, ${(((used.user + used.system) / frames) * 1000).toFixed(0)} ns of CPU per frame`);
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
