/**
 * Spawns the server under test and the load generator as child processes (compiled JavaScript
 * once `useCompiledChildren` names it, else TypeScript through ts-node's transpile-only hook),
 * each with the file-descriptor limit raised as far as allowed, and speaks to them over IPC.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import type { LoadJob, LoadResult } from '../load/load-types';
import type { ExecutorOverheadResult } from '../sections/executor-overhead';
import type { BenchConfig } from './config';
import type { GcPauses } from './gc-pauses';
import type { SpanFloor } from './sdk-span-floor';
import type { LoadCommand, LoadReply, ServerCommand, ServerReply, Target } from './ipc';
import { ValidityLedger } from './validity';

const BENCH_DIR = join(__dirname, '..');
/** 10,000 streams need 10,000 sockets in each process, plus the runtime's own descriptors. */
const WANTED_FDS = 65536;

/** The soft fd limit as bash can raise it (to WANTED_FDS, else to the hard limit). */
const RAISE_FDS = `ulimit -n ${WANTED_FDS} 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec "$@"`;

/** Where the compiled bench/ tree is (lib/compile-children.ts), once the run has built it. */
let compiledBenchDir: string | undefined;

export function useCompiledChildren(dir: string): void {
  compiledBenchDir = dir;
}

function spawnTs(script: string, args: string[], nodeFlags: string[], env: Record<string, string> = {}): ChildProcess {
  const entry = compiledBenchDir ? [join(compiledBenchDir, script.replace(/\.ts$/, '.js'))] : ['-r', 'ts-node/register/transpile-only', join(BENCH_DIR, script)];
  const nodeArgs = [...nodeFlags, ...entry, ...args];
  return spawn('bash', ['-c', RAISE_FDS, 'bench-child', process.execPath, ...nodeArgs], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ...env, TS_NODE_PROJECT: join(BENCH_DIR, '..', 'tsconfig.json') },
  });
}

/** Waits for the next IPC message of a given type (or the child's death). */
function nextMessage<M extends { type: string }, T extends M['type']>(
  child: ChildProcess,
  type: T,
  timeoutMs: number,
): Promise<Extract<M, { type: T }>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`no "${type}" from child within ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (message: M): void => {
      if (message.type === type) finish(undefined, message as Extract<M, { type: T }>);
    };
    const onExit = (code: number | null): void => finish(new Error(`child exited (${code}) before "${type}"`));
    const finish = (err?: Error, message?: Extract<M, { type: T }>): void => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve(message as Extract<M, { type: T }>);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.disconnect();
  const killer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(killer);
}

export class ServerProcess {
  private constructor(
    readonly target: Target,
    private readonly child: ChildProcess,
    /** The JSON-RPC endpoint. */
    readonly url: string,
  ) {}

  /** @param env variables of this server's own (e.g. BENCH_OBSERVABILITY) */
  /** @param nodeFlags more flags for node (bench/ab-servers.ts: e.g. --trace-gc-nvp, --max-semi-space-size=64) */
  static async start(target: Target, env: Record<string, string> = {}, nodeFlags: string[] = []): Promise<ServerProcess> {
    const child = spawnTs('servers/serve.ts', [target], ['--expose-gc', ...nodeFlags], env);
    const { port, rpcPath } = await nextMessage<ServerReply, 'listening'>(child, 'listening', 60_000);
    return new ServerProcess(target, child, `http://127.0.0.1:${port}${rpcPath}`);
  }

  private async ask<T extends ServerReply['type']>(command: ServerCommand, type: T): Promise<Extract<ServerReply, { type: T }>> {
    const reply = nextMessage<ServerReply, T>(this.child, type, 60_000);
    this.child.send(command);
    return reply;
  }

  /** The server's process id (its threads' CPU is in /proc/<pid>/task: bench/empty-task-threads.ts). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** CPU time the server process has used so far, in µs (user + system). */
  async cpuUs(): Promise<number> {
    const { userUs, systemUs } = await this.cpuUsage();
    return userUs + systemUs;
  }

  /** The same, user and system apart (process.cpuUsage() in the server). */
  async cpuUsage(): Promise<{ userUs: number; systemUs: number }> {
    const { userUs, systemUs } = await this.ask({ type: 'cpu' }, 'cpu');
    return { userUs, systemUs };
  }

  /** Makes the server's OpenTelemetry SDK export every span it still holds, and waits for the export. */
  async flushSpans(): Promise<void> {
    await this.ask({ type: 'flush-spans' }, 'spans-flushed');
  }

  /** The server's OpenTelemetry SDK's own CPU per span, over `spans` spans like its tool spans (lib/sdk-span-floor.ts). */
  async spanFloor(spans: number): Promise<SpanFloor> {
    const { perSpanUs, loopPerSpanUs } = await this.ask({ type: 'span-floor', spans }, 'span-floor');
    return { spans, perSpanUs, loopPerSpanUs };
  }

  /** RSS and heap in bytes, after a full garbage collection when `gc` (else as they are now). */
  async memory(gc: boolean): Promise<{ rss: number; heapUsed: number; external: number }> {
    const { rss, heapUsed, external } = await this.ask({ type: 'memory', gc }, 'memory');
    return { rss, heapUsed, external };
  }

  /** RSS after a full garbage collection, in bytes. */
  async rssAfterGc(): Promise<number> {
    return (await this.memory(true)).rss;
  }

  /** GC pauses (ms) since the last call (the first call starts recording them), the old generation's free bytes and the young generation's capacity now. */
  async gcPauses(): Promise<GcPauses & { oldSpaceFreeBytes: number; newSpaceCapacityBytes: number; oldSpaceUsedBytes: number; largeObjectSpaceUsedBytes: number }> {
    const { scavenges, others, oldSpaceFreeBytes, newSpaceCapacityBytes, oldSpaceUsedBytes, largeObjectSpaceUsedBytes } = await this.ask({ type: 'gc-pauses' }, 'gc-pauses');
    return { scavenges, others, oldSpaceFreeBytes, newSpaceCapacityBytes, oldSpaceUsedBytes, largeObjectSpaceUsedBytes };
  }

  /** Starts V8's sampling heap profiler in the server (every allocation, also those collected since). */
  async startAllocationProfile(survivors = false): Promise<void> {
    await this.ask({ type: 'alloc-start', survivors }, 'alloc-started');
  }

  /** Stops it and writes the profile (a .heapprofile file) to `file`. */
  async stopAllocationProfile(file: string): Promise<void> {
    await this.ask({ type: 'alloc-stop', file }, 'alloc-written');
  }

  /** Starts V8's CPU profiler in the server. */
  async startProfile(): Promise<void> {
    await this.ask({ type: 'profile-start' }, 'profile-started');
  }

  /** Stops it and writes the profile (a .cpuprofile file) to `file`. */
  async stopProfile(file: string): Promise<void> {
    await this.ask({ type: 'profile-stop', file }, 'profile-written');
  }

  stop(): Promise<void> {
    return stop(this.child);
  }

  /** Ends it at once (SIGKILL), for a server too busy to exit when asked. */
  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.kill('SIGKILL');
    await exited;
  }
}

export class LoadProcess {
  /** Every job's streams, errors and sampled frame checks, read at the end of the run. */
  readonly ledger = new ValidityLedger();

  private constructor(private readonly child: ChildProcess) {}

  static async start(): Promise<LoadProcess> {
    const child = spawnTs('load/load-generator.ts', [], []);
    await nextMessage<LoadReply, 'ready'>(child, 'ready', 60_000);
    return new LoadProcess(child);
  }

  /** The load generator's process id (bench/lib/proc-counts.ts). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  private send(command: LoadCommand): void {
    this.child.send(command);
  }

  /** Runs a job to its end (every stream settled, or the time limit). */
  async run(job: LoadJob): Promise<LoadResult> {
    const reply = nextMessage<LoadReply, 'result'>(this.child, 'result', job.timeLimitMs + 60_000);
    this.send({ type: 'run', job });
    const { result } = await reply;
    this.ledger.record(job, result);
    return result;
  }

  /** Opens an idle job's streams and resolves once each has its first frame (or the time limit). */
  async openIdle(job: LoadJob): Promise<LoadResult> {
    const reply = nextMessage<LoadReply, 'opened'>(this.child, 'opened', job.timeLimitMs + 60_000);
    this.send({ type: 'run', job });
    const { result } = await reply;
    this.ledger.record(job, result);
    return result;
  }

  async closeAll(): Promise<void> {
    const reply = nextMessage<LoadReply, 'closed'>(this.child, 'closed', 60_000);
    this.send({ type: 'close' });
    await reply;
  }

  stop(): Promise<void> {
    return stop(this.child);
  }
}

/** Runs the executor-overhead section in a fresh child process and returns its rows. */
export async function measureExecutorOverheadInChild(config: BenchConfig): Promise<ExecutorOverheadResult> {
  const child = spawnTs('sections/executor-overhead-child.ts', [JSON.stringify(config)], []);
  type Reply = { type: 'executor-overhead'; rows: ExecutorOverheadResult };
  const { rows } = await nextMessage<Reply, 'executor-overhead'>(child, 'executor-overhead', 600_000);
  await stop(child);
  return rows;
}
