/**
 * A preload for a bench server (bench/paced-tail.ts transpiles it and passes `--require`): stamps,
 * on the monotonic clock the frames' publish times use (bench/lib/scenario.ts nowUs), each
 * frame's publish time and when the server handed it to its response, each GC pause, each
 * Redis command's send and reply (with its name, or its script's SHA1), and each event-loop turn that kept a 1 ms timer over 2 ms late,
 * with the CPU the process used (every thread) and the time its main thread waited for a CPU
 * (/proc/self/schedstat) meanwhile, and each snapshot the Redis writer builds. Typed arrays, so that the probe adds little to the heap it
 * watches; written as JSON to `<PACED_TAIL_OUT>-<pid>.json` when the server exits. Not for production.
 */
import { closeSync, openSync, readSync, writeFileSync } from 'node:fs';
import { ServerResponse } from 'node:http';
import { PerformanceObserver, performance } from 'node:perf_hooks';

const nowUs = (): number => {
  const [s, ns] = process.hrtime();
  return s * 1e6 + ns / 1e3;
};
// performance.now() is on the same monotonic clock, from another origin.
const perfOffsetUs = nowUs() - performance.now() * 1000;
const FRAMES = 1 << 21;
const frames = new Float64Array(FRAMES * 2);
let frameCount = 0;
const gcs = new Float64Array(3 << 14);
let gcCount = 0;
const calls = new Float64Array(FRAMES * 3);
let callCount = 0;
const lates = new Float64Array(4 << 16);
let lateCount = 0;
const snapshots = new Float64Array(2 << 16);
let snapshotCount = 0;
const KEY = 'publishedAtUs":';
const KEY_BYTES = Buffer.from(KEY);

function stamp(chunk: unknown, at: number): void {
  if (typeof chunk === 'string') {
    for (let i = chunk.indexOf(KEY); i >= 0 && frameCount < FRAMES; i = chunk.indexOf(KEY, i + KEY.length)) {
      frames[2 * frameCount] = parseFloat(chunk.slice(i + KEY.length, i + KEY.length + 24));
      frames[2 * frameCount++ + 1] = at;
    }
  } else if (Buffer.isBuffer(chunk)) {
    for (let i = chunk.indexOf(KEY_BYTES); i >= 0 && frameCount < FRAMES; i = chunk.indexOf(KEY_BYTES, i + KEY.length)) {
      // The digits read in place: no string per frame.
      let value = 0;
      let scale = 0;
      for (let j = i + KEY.length; j < chunk.length; j++) {
        const c = chunk[j];
        if (c === 0x2e && scale === 0) scale = 1;
        else if (c >= 0x30 && c <= 0x39) {
          if (scale === 0) value = value * 10 + (c - 0x30);
          else value += (c - 0x30) * (scale /= 10);
        } else break;
      }
      frames[2 * frameCount] = value;
      frames[2 * frameCount++ + 1] = at;
    }
  }
}

const write = ServerResponse.prototype.write as (this: ServerResponse, chunk: unknown, ...rest: unknown[]) => boolean;
ServerResponse.prototype.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]): boolean {
  stamp(chunk, nowUs());
  return write.call(this, chunk, ...rest);
} as typeof ServerResponse.prototype.write;

new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if (gcCount >= gcs.length / 3) return;
    gcs[3 * gcCount] = entry.startTime * 1000 + perfOffsetUs;
    gcs[3 * gcCount + 1] = entry.duration * 1000;
    gcs[3 * gcCount++ + 2] = (entry as { detail?: { kind?: number } }).detail?.kind ?? 0;
  }
}).observe({ entryTypes: ['gc'] });

interface SentCommand {
  name: string;
  args: unknown[];
  promise: Promise<unknown>;
}
// Every command's kind (its name, an EVALSHA's script SHA1): index into `kinds`.
const kinds: string[] = [];
const kindIndex = new Map<string, number>();
// The server's ioredis (the bench runs from the repository, whose node_modules hold it).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { default: Redis } = require(require.resolve('ioredis', { paths: [process.cwd(), __dirname] })) as { default: { prototype: { sendCommand: (command: SentCommand, ...rest: unknown[]) => unknown } } };
const sendCommand = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (this: unknown, command: SentCommand, ...rest: unknown[]): unknown {
  if (command && callCount < FRAMES) {
    const kind = command.name === 'evalsha' ? `evalsha ${String(command.args[0])}` : command.name;
    let code = kindIndex.get(kind);
    if (code === undefined) {
      code = kinds.push(kind) - 1;
      kindIndex.set(kind, code);
    }
    const i = callCount++;
    calls[3 * i] = nowUs();
    calls[3 * i + 1] = 0;
    calls[3 * i + 2] = code;
    command.promise.then(
      () => (calls[3 * i + 1] = nowUs()),
      () => (calls[3 * i + 1] = -1),
    );
  }
  return sendCommand.call(this, command, ...rest);
};

// The main thread's time waiting for a CPU, in ns (the second field of /proc/self/schedstat).
const schedstat = openSync('/proc/self/schedstat', 'r');
const schedBuffer = Buffer.alloc(128);
function waitedNs(): number {
  const n = readSync(schedstat, schedBuffer, 0, schedBuffer.length, 0);
  const text = schedBuffer.toString('latin1', 0, n);
  return Number(text.split(' ')[1]);
}
/**
 * Times the Redis writer's snapshot builds (src/a2a/store/redis-snapshot-json.ts), once the
 * server has loaded that module: its callers read the export through the module object.
 */
let snapshotsTimed = false;
function timeSnapshots(): void {
  const file = Object.keys(require.cache).find((path) => path.endsWith('redis-snapshot-json.js'));
  const exported = file ? (require.cache[file]?.exports as Record<string, (...args: unknown[]) => unknown> | undefined) : undefined;
  if (!exported?.taskSnapshotBuffer) return;
  snapshotsTimed = true;
  const build = exported.taskSnapshotBuffer;
  exported.taskSnapshotBuffer = (...args: unknown[]): unknown => {
    const start = nowUs();
    const built = build(...args);
    if (snapshotCount < snapshots.length / 2) {
      snapshots[2 * snapshotCount] = start;
      snapshots[2 * snapshotCount++ + 1] = nowUs() - start;
    }
    return built;
  };
}

let expected = nowUs() + 1000;
let cpuBefore = process.cpuUsage();
let waitedBefore = waitedNs();
setInterval(() => {
  if (!snapshotsTimed) timeSnapshots();
  const at = nowUs();
  const cpu = process.cpuUsage();
  const waited = waitedNs();
  if (at - expected > 2000 && lateCount < lates.length / 4) {
    lates[4 * lateCount] = at;
    lates[4 * lateCount + 1] = at - expected;
    lates[4 * lateCount + 2] = cpu.user - cpuBefore.user + cpu.system - cpuBefore.system;
    lates[4 * lateCount++ + 3] = (waited - waitedBefore) / 1000;
  }
  cpuBefore = cpu;
  waitedBefore = waited;
  expected = at + 1000;
}, 1).unref();

process.on('exit', () => {
  closeSync(schedstat);
  const out = process.env.PACED_TAIL_OUT;
  if (!out) return;
  writeFileSync(
    `${out}-${process.pid}.json`,
    JSON.stringify({
      frames: Array.from(frames.subarray(0, 2 * frameCount)),
      gcs: Array.from(gcs.subarray(0, 3 * gcCount)),
      calls: Array.from(calls.subarray(0, 3 * callCount)),
      kinds,
      lates: Array.from(lates.subarray(0, 4 * lateCount)),
      snapshots: Array.from(snapshots.subarray(0, 2 * snapshotCount)),
    }),
  );
});
