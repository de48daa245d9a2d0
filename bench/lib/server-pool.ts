import { loadavg } from 'node:os';
import type { LoadJob, LoadResult } from '../load/load-types';
import type { Target } from './ipc';
import { LoadProcess, ServerProcess } from './processes';
import { gcFigures, type GcDuringRun } from './gc-pauses';
import type { BenchRedis } from './redis';
import { countsPer, cpuUsageOf, procCounts, runQueueWaitUs, threadCpu, type ProcCounts } from './proc-counts';
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
  /** 0-based; -1 for an uncounted run (the paired row's run of each server before its repetitions). */
  rep: number;
  /**
   * A target's point runs toolstream and the limit twice per repetition, in an ABBA order
   * (lib/pairing.ts): which of the server's two runs of the repetition this is (0, 1); absent
   * for a server's only run of a repetition.
   */
  pass?: number;
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
  /** The same, user and system apart (results written before round 14 have neither). */
  serverUserPerFrameUs?: number;
  serverSystemPerFrameUs?: number;
  /**
   * The machine's context switches per frame during the run (/proc/stat, every process): with
   * one stream, how often the loopback woke the other side, the regime the run went in.
   */
  contextSwitchesPerFrame?: number;
  /** More /proc counts per frame: lib/proc-counts.ts. */
  proc?: RunProcCounts;
  /** The load process's CPU per frame: shows the client was not the bottleneck. */
  clientCpuPerFrameUs: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** Redis-mode runs: commands Redis processed per frame (an upper bound on round trips). */
  redisCommandsPerFrame?: number;
  /** Runs that watched the server's GC (the paced rows). */
  gc?: ReturnType<typeof gcFigures>;
  /**
   * The server's CPU on threads other than its main one during the run, in µs (/proc, 10 ms
   * ticks per thread): V8's GC helpers (concurrent marking and sweeping, parallel scavenging)
   * and its compiler. A major GC's cycle shows here first (results before round 18 have none).
   */
  serverOtherThreadsUs?: number;
  /**
   * How long, in ms over the run, the threads of the server, of its redis-server (Redis-mode
   * runs) and of the load generator were runnable but waiting for a CPU (/proc schedstat): on
   * two shared cores a paced row's p99 follows the server's and Redis's (results before round 20
   * have none).
   */
  runQueueWaitMs?: { server: number; redis?: number; load?: number };
}

/**
 * Per frame of a run, from /proc: the machine's interrupts, and for the server's and the load
 * generator's main threads the times each waited (voluntary switches: the load generator waits
 * for bytes, the server for a socket to drain or a timer) and was preempted; and how many times
 * each moved to the other CPU during the run (a count, not per frame).
 */
export interface RunProcCounts {
  interrupts: number;
  serverWaits: number;
  serverPreempted: number;
  loadWaits: number;
  loadPreempted: number;
  serverMigrations: number;
  loadMigrations: number;
}

/** /proc counts of the server and the load generator around a run. */
export interface RunCounts {
  server: { before: ProcCounts; after: ProcCounts };
  load?: { before: ProcCounts; after: ProcCounts };
  serverUserUs: number;
  serverSystemUs: number;
}

export interface MeasuredRun {
  target: Target;
  result: LoadResult;
  /** Server CPU (user + system) spent during the run, in µs. */
  serverCpuUs: number;
  loadAverage: number;
  redisCommands?: number;
  gc?: GcDuringRun;
  counts?: RunCounts;
  /** See RunRecord.serverOtherThreadsUs. */
  serverOtherThreadsUs?: number;
  /** See RunRecord.runQueueWaitMs. */
  runQueueWaitMs?: RunRecord['runQueueWaitMs'];
}

function perFrame(counts: RunCounts | undefined, frames: number): Partial<RunRecord> {
  if (!counts || frames <= 0) return {};
  const s = countsPer(counts.server.before, counts.server.after, frames);
  const l = counts.load && countsPer(counts.load.before, counts.load.after, frames);
  return {
    serverUserPerFrameUs: counts.serverUserUs / frames,
    serverSystemPerFrameUs: counts.serverSystemUs / frames,
    contextSwitchesPerFrame: s.contextSwitches,
    proc: {
      interrupts: s.interrupts,
      serverWaits: s.voluntarySwitches,
      serverPreempted: s.involuntarySwitches,
      loadWaits: l?.voluntarySwitches ?? NaN,
      loadPreempted: l?.involuntarySwitches ?? NaN,
      serverMigrations: Math.round(s.migrations * frames),
      loadMigrations: l ? Math.round(l.migrations * frames) : NaN,
    },
  };
}

function describeWait(w: NonNullable<RunRecord['runQueueWaitMs']>): string {
  return `${Math.round(w.server)} ms` + (w.redis !== undefined ? `, Redis ${Math.round(w.redis)} ms` : '') + (w.load !== undefined ? `, load ${Math.round(w.load)} ms` : '');
}

/** One line for a section's log: a run's rate, CPU per frame user + system, /proc counts per frame, and the time each process waited for a CPU. */
export function describeRunCounts(r: RunRecord): string {
  const head = `${r.target} ${r.rep < 0 ? 'uncounted' : `rep ${r.rep + 1}`}: ${Math.round(r.framesPerSec)} f/s, ${r.serverCpuPerFrameUs.toFixed(1)} µs per frame`;
  if (r.serverUserPerFrameUs === undefined || r.contextSwitchesPerFrame === undefined) return head;
  const p = r.proc;
  return (
    `${head} (user ${r.serverUserPerFrameUs.toFixed(1)} + system ${(r.serverSystemPerFrameUs ?? NaN).toFixed(1)}), ` +
    `${r.contextSwitchesPerFrame.toFixed(2)} context switches per frame` +
    (p ? ` (load waits ${p.loadWaits.toFixed(2)}, server waits ${p.serverWaits.toFixed(2)}, preempted ${p.serverPreempted.toFixed(2)} / ${p.loadPreempted.toFixed(2)})` : '') +
    (r.runQueueWaitMs ? `; waited for a CPU: server ${describeWait(r.runQueueWaitMs)}` : '')
  );
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
    ...perFrame(run.counts, r.frames),
    ...(run.gc ? { gc: gcFigures(run.gc) } : {}),
    ...(run.serverOtherThreadsUs !== undefined ? { serverOtherThreadsUs: run.serverOtherThreadsUs } : {}),
    ...(run.runQueueWaitMs ? { runQueueWaitMs: run.runQueueWaitMs } : {}),
  };
}

/** threadCpu, or undefined where it cannot be read (no /proc, the process gone, a thread ended between the listing and its read). */
function threadCpuOf(pid: number | undefined): { main: number; others: number } | undefined {
  if (pid === undefined) return undefined;
  try {
    return threadCpu(pid);
  } catch {
    return undefined;
  }
}

/**
 * One warm server process per target, started on first use and shared by the runs of a
 * section. A run that was cut leaves work behind in the server (the reference never aborts a
 * run whose client left), so that server is replaced before the next run.
 */
interface Waits {
  server?: number;
  redis?: number;
  load?: number;
}

/** The run-queue waits so far (µs) of the server, its redis-server and the load generator. */
function waits(server: number | undefined, redis: number | undefined, load: number | undefined): Waits {
  return { server: runQueueWaitUs(server), redis: runQueueWaitUs(redis), load: runQueueWaitUs(load) };
}

/** From `a` to `b`, in ms; undefined when the server's could not be read. */
function waitedMs(a: Waits, b: Waits): RunRecord['runQueueWaitMs'] {
  const ms = (x?: number, y?: number): number | undefined => (x !== undefined && y !== undefined ? (y - x) / 1000 : undefined);
  const server = ms(a.server, b.server);
  if (server === undefined) return undefined;
  const redis = ms(a.redis, b.redis);
  const load = ms(a.load, b.load);
  return { server, ...(redis !== undefined ? { redis } : {}), ...(load !== undefined ? { load } : {}) };
}

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
    const redisPid = redis ? await redis.processId() : undefined;
    const commandsBefore = await redis?.commandsProcessed();
    const gcBefore = watchGc ? await server.gcPauses() : undefined;
    const asked = await server.cpuUsage();
    const procBefore = procCounts(server.pid);
    const threadsBefore = threadCpuOf(server.pid);
    const loadBefore = procCounts(this.load.pid);
    const waitBefore = waits(server.pid, redisPid, this.load.pid);
    const result = await this.load.run({ url: server.url, streams, maxOpen, scenario, timeLimitMs });
    const waitAfter = waits(server.pid, redisPid, this.load.pid);
    const procAfter = procCounts(server.pid);
    const threadsAfter = threadCpuOf(server.pid);
    const loadAfter = procCounts(this.load.pid);
    // A cut run leaves its streams' work running in the server (the reference never aborts a run
    // whose client left), and that keeps its event loop from answering until the work is done:
    // ~22 s after a paced row's 5 s (probe, 2026-12-04), CPU that would count as the run's. So a
    // cut run's CPU is read from /proc at the cut (clock ticks, every thread), its GC is not
    // read, and the server is killed and replaced (retire).
    const cut = result.cut > 0 || result.failed > 0;
    const [before, after] = cut && procBefore && procAfter ? [cpuUsageOf(procBefore), cpuUsageOf(procAfter)] : [asked, await server.cpuUsage()];
    const serverCpuUs = after.userUs + after.systemUs - (before.userUs + before.systemUs);
    const counts: RunCounts | undefined =
      procBefore && procAfter
        ? {
            server: { before: procBefore, after: procAfter },
            load: loadBefore && loadAfter ? { before: loadBefore, after: loadAfter } : undefined,
            serverUserUs: after.userUs - before.userUs,
            serverSystemUs: after.systemUs - before.systemUs,
          }
        : undefined;
    const gcDuring = gcBefore && !cut ? await server.gcPauses() : undefined;
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
    if (cut) await this.retire(target, true);
    // Failed streams fail the whole run (the validity ledger); all of them failing means the
    // server under test is broken, and nothing after it would mean anything.
    if (result.failed === streams) throw new Error(`${target}: every stream failed: ${result.errors.join('; ')}`);
    const serverOtherThreadsUs = threadsBefore && threadsAfter ? threadsAfter.others - threadsBefore.others : undefined;
    const runQueueWaitMs = waitedMs(waitBefore, waitAfter);
    return { target, result, serverCpuUs, loadAverage, redisCommands, gc, counts, serverOtherThreadsUs, ...(runQueueWaitMs ? { runQueueWaitMs } : {}) };
  }

  /** @param kill true: at once (SIGKILL), for a server busy with a cut run's work, which would not exit when asked */
  async retire(target: Target, kill = false): Promise<void> {
    const server = this.servers.get(target);
    this.servers.delete(target);
    await (kill ? server?.kill() : server?.stop());
  }

  async stopAll(): Promise<void> {
    for (const target of [...this.servers.keys()]) await this.retire(target);
  }
}
