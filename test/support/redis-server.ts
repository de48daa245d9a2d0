import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A redis-server of the test's own: a free loopback port, a temp dir, no persistence unless asked. */
export interface TestRedis {
  port: number;
  url: string;
  dir: string;
  /** Stops the server (SIGKILL with `hard`, like a crash); the dir stays until `stop`. */
  kill(hard?: boolean): Promise<void>;
  /** Starts it again on the same port and dir (after `kill`). */
  restart(): Promise<void>;
  /** Stops the server and removes its dir. */
  stop(): Promise<void>;
}

export interface TestRedisOptions {
  /** Keep an append-only file in the dir (for tests about persistence). */
  persist?: boolean;
  /** Runs redis-server under this command (e.g. valgrind and its options), given the dir. */
  under?: (dir: string) => string[];
  /** More redis-server options (e.g. `--hz 1`). */
  args?: string[];
  /** How long it may take to listen (a server under valgrind takes seconds). */
  startTimeoutMs?: number;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`redis-server did not listen on ${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Servers started here and not stopped, with their dirs: a process that ends without stopping them (a crash, a failed run) takes them along. */
const live = new Map<ChildProcess, string>();
let reaperOn = false;

function reapOnExit(): void {
  if (reaperOn) return;
  reaperOn = true;
  process.once('exit', () => {
    for (const [child, dir] of live) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

export async function startRedis(options: TestRedisOptions = {}): Promise<TestRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'toolstream-redis-'));
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', options.persist ? 'yes' : 'no', '--protected-mode', 'no', ...(options.args ?? [])];
  const [command, ...commandArgs] = [...(options.under?.(dir) ?? []), 'redis-server', ...args];
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    const started = spawn(command, commandArgs, { stdio: 'ignore' });
    child = started;
    live.set(started, dir);
    started.once('exit', () => live.delete(started));
    reapOnExit();
    await waitForPort(port, options.startTimeoutMs ?? 10_000);
  };
  const kill = async (hard = false): Promise<void> => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.kill(hard ? 'SIGKILL' : 'SIGTERM');
    });
  };
  await launch();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    kill,
    restart: launch,
    stop: async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
