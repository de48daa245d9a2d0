import { loadavg } from 'node:os';
import type { LoadJob, LoadResult } from '../load/load-types';
import type { Target } from './ipc';
import { LoadProcess, ServerProcess } from './processes';
import { gcFigures, type GcDuringRun } from './gc-pauses';
import type { BenchRedis } from './redis';
import { FRAMES_PER_TOOL_CALL, type Scenario } from './scenario';

/**
 * Warm-up before any figure, until the JIT has compiled each server's hot path: a few thousand
 * frames, over several tasks. The references get fewer (they deliver ~1,000 frames/s at best).
 */
function warmUp(target: Target): Pick<LoadJob, 'streams' | 'maxOpen' | 'scenario' | 'timeLimitMs'> {
  const toolCalls = target.startsWith('reference') ? 50 : 500;
  return { streams: 20, maxOpen: 4, scenario: { toolCalls, intervalMs: 0, idle: false }, timeLimitMs: 60_000 };
}

/** One repetition of one load run against one server, as results.json keeps it. */
export interface RunRecord {
  target: Target;
  rep: number;
  /** One-minute load average of the machine when the run started. */
  loadAverage: number;
  streams: number;
  completed: number;
  cut: number;
  failed: number;
  frames: number;
  framesExpected: number;
  elapsedMs: number;
  framesPerSec: number;
  /** Server CPU (user + system) per frame delivered, all in (the tasks' fixed cost included). */
  serverCpuPerFrameUs: number;
  serverCpuUs: number;
  /** The load process's CPU per frame: shows the client was not the bottleneck. */
  clientCpuPerFrameUs: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** Redis-mode runs: commands Redis processed per frame (an upper bound on round trips). */
  redisCommandsPerFrame?: number;
  /** Runs that watched the server's GC (the paced rows). */
  gc?: ReturnType<typeof gcFigures>;
}

export interface MeasuredRun {
  target: Target;
  result: LoadResult;
  /** Server CPU (user + system) spent during the run, in µs. */
  serverCpuUs: number;
  loadAverage: number;
  redisCommands?: number;
  gc?: GcDuringRun;
}

export function runRecord(run: MeasuredRun, rep: number, scenario: Scenario): RunRecord {
  const r = run.result;
  return {
    target: run.target,
    rep,
    loadAverage: run.loadAverage,
    streams: r.streams,
    completed: r.completed,
    cut: r.cut,
    failed: r.failed,
    frames: r.frames,
    framesExpected: r.streams * scenario.toolCalls * FRAMES_PER_TOOL_CALL,
    elapsedMs: r.elapsedMs,
    framesPerSec: r.framesPerSec,
    serverCpuPerFrameUs: r.frames > 0 ? run.serverCpuUs / r.frames : NaN,
    serverCpuUs: run.serverCpuUs,
    clientCpuPerFrameUs: r.frames > 0 ? r.clientCpuUs / r.frames : NaN,
    latencyP50Ms: r.latency.p50Ms,
    latencyP99Ms: r.latency.p99Ms,
    ...(run.redisCommands !== undefined ? { redisCommandsPerFrame: r.frames > 0 ? run.redisCommands / r.frames : NaN } : {}),
    ...(run.gc ? { gc: gcFigures(run.gc) } : {}),
  };
}

/**
 * One warm server process per target, started on first use and shared by the runs of a
 * section. A run that was cut leaves work behind in the server (the reference never aborts a
 * run whose client left), so that server is replaced before the next run.
 */
export class ServerPool {
  private readonly servers = new Map<Target, ServerProcess>();

  /**
   * @param redis the redis-server of toolstream-redis, when there is one
   * @param serverFlags more node flags for every server it starts (bench/paced-latency.ts `--server-flags`)
   */
  constructor(
    readonly load: LoadProcess,
    readonly redis?: BenchRedis,
    private readonly serverFlags: string[] = [],
  ) {}

  /** @param warm false: a server that has served no request yet (its store empty) */
  async server(target: Target, warm = true): Promise<ServerProcess> {
    let server = this.servers.get(target);
    if (!server) {
      server = await ServerProcess.start(target, {}, this.serverFlags);
      this.servers.set(target, server);
      if (warm) await this.warm(target, server);
    }
    return server;
  }

  /**
   * Starts the servers a section is about to use, all at once (a start is mostly TypeScript
   * compiling, one core each, and nothing is measured meanwhile), then warms them one by one.
   */
  async prepare(targets: readonly Target[]): Promise<void> {
    const missing = [...new Set(targets)].filter((t) => !this.servers.has(t));
    const started = await Promise.allSettled(missing.map((t) => ServerProcess.start(t, {}, this.serverFlags)));
    for (const [i, outcome] of started.entries()) if (outcome.status === 'fulfilled') this.servers.set(missing[i], outcome.value);
    const failed = started.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed) throw failed.reason;
    for (const target of missing) await this.warm(target, this.servers.get(target) as ServerProcess);
  }

  private async warm(target: Target, server: ServerProcess): Promise<void> {
    const warmed = await this.load.run({ url: server.url, ...warmUp(target) });
    if (warmed.completed !== warmed.streams) {
      throw new Error(`${target} failed its warm-up: ${warmed.errors.join('; ') || `${warmed.cut} streams cut`}`);
    }
  }

  /**
   * Runs one load job against a target and measures the server's CPU during it.
   * @param watchGc also the server's GC pauses during it, and its old space's free bytes at its start
   * @param warmFirst runs the warm-up again first (untimed) on a server that was already up, so that
   * the job starts on a server that has just served, however long the section left it idle: V8
   * shrinks an idle server's young generation at its first scavenge after ~16 s of idle, and a
   * paced run's 5 s are then spent growing it back (docs/deploying.md, "thirteenth round")
   */
  async run(target: Target, streams: number, scenario: Scenario, timeLimitMs: number, maxOpen?: number, { watchGc = false, warmFirst = false } = {}): Promise<MeasuredRun> {
    const fresh = !this.servers.has(target);
    const server = await this.server(target);
    if (warmFirst && !fresh) await this.warm(target, server);
    const loadAverage = loadavg()[0];
    const redis = target === 'toolstream-redis' ? this.redis : undefined;
    const commandsBefore = await redis?.commandsProcessed();
    const gcBefore = watchGc ? await server.gcPauses() : undefined;
    const before = await server.cpuUs();
    const result = await this.load.run({ url: server.url, streams, maxOpen, scenario, timeLimitMs });
    const serverCpuUs = (await server.cpuUs()) - before;
    const gcDuring = gcBefore && (await server.gcPauses());
    const gc =
      gcBefore && gcDuring
        ? {
            scavenges: gcDuring.scavenges,
            others: gcDuring.others,
            oldSpaceFreeBytesAtStart: gcBefore.oldSpaceFreeBytes,
            newSpaceBytesAtStart: gcBefore.newSpaceCapacityBytes,
            newSpaceBytesAtEnd: gcDuring.newSpaceCapacityBytes,
          }
        : undefined;
    const redisCommands = redis && commandsBefore !== undefined ? (await redis.commandsProcessed()) - commandsBefore : undefined;
    if (result.cut > 0 || result.failed > 0) await this.retire(target);
    // Failed streams fail the whole run (the validity ledger); all of them failing means the
    // server under test is broken, and nothing after it would mean anything.
    if (result.failed === streams) throw new Error(`${target}: every stream failed: ${result.errors.join('; ')}`);
    return { target, result, serverCpuUs, loadAverage, redisCommands, gc };
  }

  async retire(target: Target): Promise<void> {
    const server = this.servers.get(target);
    this.servers.delete(target);
    await server?.stop();
  }

  async stopAll(): Promise<void> {
    for (const target of [...this.servers.keys()]) await this.retire(target);
  }
}
