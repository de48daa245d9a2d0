/**
 * The built demo app as real processes: `npm run build` at most once for the sources as they
 * are (a stamp in dist says which build it holds; a lock keeps parallel Jest workers from
 * building over each other), then `node dist/main.js` on free ports.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const STAMP = join(ROOT, 'dist', '.build-stamp');
const LOCK = join(ROOT, '.build-lock');

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited ${code}:\n${output}`))));
  });
}

/** The newest modification time under a folder (ms). */
function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

function builtIsFresh(): boolean {
  try {
    return statSync(STAMP).mtimeMs > Math.max(newest(join(ROOT, 'src')), statSync(join(ROOT, 'package.json')).mtimeMs);
  } catch {
    return false;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Holds the build lock (a directory, created atomically); a lock whose holder died is taken over. */
async function withBuildLock(work: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      break;
    } catch {
      let holder = NaN;
      try {
        holder = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
      } catch {
        // being created or removed right now
      }
      if (Number.isInteger(holder) && !isAlive(holder)) rmSync(LOCK, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`the build lock ${LOCK} is still held`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    await work();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

/** `npm run build`, unless dist already holds a build of the current sources. */
export async function buildOnce(): Promise<void> {
  if (builtIsFresh()) return;
  await withBuildLock(async () => {
    if (builtIsFresh()) return;
    await run('npm', ['run', 'build']);
    writeFileSync(STAMP, new Date().toISOString());
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

export interface BuiltServer {
  base: string;
  port: number;
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

/** `node dist/main.js` on `port` (a free one by default), offline, once it listens. */
export async function startBuiltServer(env: Record<string, string>, port?: number): Promise<BuiltServer> {
  const listenOn = port ?? (await freePort());
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env, PORT: String(listenOn) };
  delete childEnv.OPENAI_API_KEY;
  delete childEnv.OPENAI_BASE_URL;
  const child = spawn(process.execPath, ['dist/main.js'], { cwd: ROOT, env: childEnv, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const deadline = Date.now() + 30_000;
  while (!output.includes('toolstream listening on')) {
    if (child.exitCode !== null) throw new Error(`the server exited ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) throw new Error(`the server did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    base: `http://127.0.0.1:${listenOn}`,
    port: listenOn,
    child,
    output: () => output,
    exited,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
