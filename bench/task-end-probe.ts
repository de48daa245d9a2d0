/**
 * A preload for a bench server (bench/task-end-cost.ts transpiles it and passes `--require`):
 * stamps, on the frames' monotonic clock (bench/lib/scenario.ts nowUs), each frame's publish time
 * and when the server handed it to its response (with its tool call's number), each response's end, the main thread's CPU time every 2 ms
 * (/proc/thread-self/schedstat: time on a CPU, so waits for one do not count), each Redis
 * command's send and reply with its kind (its name, an EVALSHA's script SHA1) and the bytes it
 * wrote, and each snapshot the Redis writer builds (when, how long, how many bytes). Typed
 * arrays; written as JSON to `<TASK_END_OUT>-<pid>.json` when the server exits. Not for production.
 */
import { closeSync, openSync, readSync, writeFileSync } from 'node:fs';
import { ServerResponse } from 'node:http';
import { Session } from 'node:inspector';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const nowUs = (): number => {
  const [s, ns] = process.hrtime();
  return s * 1e6 + ns / 1e3;
};
const MAX = 1 << 21;
const frames = new Float64Array(MAX * 3);
let frameCount = 0;
const calls = new Float64Array(MAX * 4);
let callCount = 0;
const cpu = new Float64Array(1 << 20);
let cpuCount = 0;
const snapshots = new Float64Array(3 << 16);
let snapshotCount = 0;
const KEY_BYTES = Buffer.from('publishedAtUs":');

function stamp(chunk: unknown, at: number): void {
  const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.isBuffer(chunk) ? chunk : undefined;
  if (!buffer) return;
  for (let i = buffer.indexOf(KEY_BYTES); i >= 0 && frameCount < MAX; i = buffer.indexOf(KEY_BYTES, i + KEY_BYTES.length)) {
    let value = 0;
    let scale = 0;
    for (let j = i + KEY_BYTES.length; j < buffer.length; j++) {
      const c = buffer[j];
      if (c === 0x2e && scale === 0) scale = 1;
      else if (c >= 0x30 && c <= 0x39) {
        if (scale === 0) value = value * 10 + (c - 0x30);
        else value += (c - 0x30) * (scale /= 10);
      } else break;
    }
    // The tool call's number: `"seq":<n>,` right before the publish time.
    let seq = 0;
    let digit = 1;
    for (let j = i - 3; j >= 0 && buffer[j] >= 0x30 && buffer[j] <= 0x39; j--, digit *= 10) seq += (buffer[j] - 0x30) * digit;
    frames[3 * frameCount] = value;
    frames[3 * frameCount + 1] = at;
    frames[3 * frameCount++ + 2] = seq;
  }
}

const write = ServerResponse.prototype.write as (this: ServerResponse, chunk: unknown, ...rest: unknown[]) => boolean;
ServerResponse.prototype.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]): boolean {
  stamp(chunk, nowUs());
  return write.call(this, chunk, ...rest);
} as typeof ServerResponse.prototype.write;

const ends = new Float64Array(1 << 18);
let endCount = 0;
const end = ServerResponse.prototype.end as (this: ServerResponse, ...rest: unknown[]) => ServerResponse;
ServerResponse.prototype.end = function (this: ServerResponse, ...rest: unknown[]): ServerResponse {
  if (endCount < ends.length) ends[endCount++] = nowUs();
  return end.call(this, ...rest);
} as typeof ServerResponse.prototype.end;

interface SentCommand {
  name: string;
  args: unknown[];
  promise: Promise<unknown>;
  written?: Buffer;
}
const kinds: string[] = [];
const kindIndex = new Map<string, number>();
// The server's ioredis (the bench runs from the repository, whose node_modules hold it).
const { default: Redis } = createRequire(join(process.cwd(), 'package.json'))('ioredis') as { default: { prototype: { sendCommand: (command: SentCommand, ...rest: unknown[]) => unknown } } };
const sendCommand = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (this: unknown, command: SentCommand, ...rest: unknown[]): unknown {
  if (command && callCount < MAX) {
    const kind = command.name === 'evalsha' ? `evalsha ${String(command.args[0])}` : command.name;
    let code = kindIndex.get(kind);
    if (code === undefined) {
      code = kinds.push(kind) - 1;
      kindIndex.set(kind, code);
    }
    // The bytes of its arguments (the store's append call wrote them into one buffer: `written`).
    let bytes = command.written?.length ?? 0;
    if (!command.written) for (const arg of command.args) bytes += Buffer.isBuffer(arg) ? arg.length : String(arg).length;
    const i = callCount++;
    calls[4 * i] = nowUs();
    calls[4 * i + 1] = 0;
    calls[4 * i + 2] = code;
    calls[4 * i + 3] = bytes;
    command.promise.then(
      () => (calls[4 * i + 1] = nowUs()),
      () => (calls[4 * i + 1] = -1),
    );
  }
  return sendCommand.call(this, command, ...rest);
};

// The main thread's time on a CPU, in ns (the first field of /proc/thread-self/schedstat).
const schedstat = openSync('/proc/thread-self/schedstat', 'r');
const schedBuffer = Buffer.alloc(128);
function onCpuNs(): number {
  const n = readSync(schedstat, schedBuffer, 0, schedBuffer.length, 0);
  return Number(schedBuffer.toString('latin1', 0, n).split(' ')[0]);
}

let snapshotsTimed = false;
function timeSnapshots(): void {
  const file = Object.keys(require.cache).find((path) => path.endsWith('redis-snapshot-json.js'));
  const exported = file ? (require.cache[file]?.exports as Record<string, (...args: unknown[]) => unknown> | undefined) : undefined;
  if (!exported?.taskSnapshotBuffer) return;
  snapshotsTimed = true;
  const build = exported.taskSnapshotBuffer;
  exported.taskSnapshotBuffer = (...args: unknown[]): unknown => {
    const start = nowUs();
    const built = build(...args) as Buffer;
    if (snapshotCount < snapshots.length / 3) {
      snapshots[3 * snapshotCount] = start;
      snapshots[3 * snapshotCount + 1] = nowUs() - start;
      snapshots[3 * snapshotCount++ + 2] = built.length;
    }
    return built;
  };
}

setInterval(() => {
  if (!snapshotsTimed) timeSnapshots();
  if (2 * cpuCount < cpu.length) {
    cpu[2 * cpuCount] = nowUs();
    cpu[2 * cpuCount++ + 1] = onCpuNs() / 1000;
  }
}, 2).unref();

/**
 * TASK_END_PROFILE set: SIGUSR2 starts V8's CPU profiler (sampling every 100 µs), the next SIGUSR2
 * stops it and writes `<TASK_END_OUT>-<pid>-<n>.cpuprofile` (its timestamps on the same monotonic clock).
 */
if (process.env.TASK_END_PROFILE) {
  const session = new Session();
  session.connect();
  let profiling = false;
  let written = 0;
  process.on('SIGUSR2', () => {
    if (!profiling) {
      profiling = true;
      session.post('Profiler.enable', () => session.post('Profiler.setSamplingInterval', { interval: 100 }, () => session.post('Profiler.start')));
      return;
    }
    profiling = false;
    session.post('Profiler.stop', (err, result) => {
      if (!err && process.env.TASK_END_OUT) writeFileSync(`${process.env.TASK_END_OUT}-${process.pid}-${written++}.cpuprofile`, JSON.stringify(result.profile));
    });
  });
}

process.on('exit', () => {
  closeSync(schedstat);
  const out = process.env.TASK_END_OUT;
  if (!out) return;
  writeFileSync(
    `${out}-${process.pid}.json`,
    JSON.stringify({
      frames: Array.from(frames.subarray(0, 3 * frameCount)),
      ends: Array.from(ends.subarray(0, endCount)),
      calls: Array.from(calls.subarray(0, 4 * callCount)),
      kinds,
      cpu: Array.from(cpu.subarray(0, 2 * cpuCount)),
      snapshots: Array.from(snapshots.subarray(0, 3 * snapshotCount)),
    }),
  );
});
