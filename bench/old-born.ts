/**
 * `node -r ts-node/register/transpile-only bench/old-born.ts [tasks] [--target=limit|floor] [--warm=N]`
 *
 * Two counts about what an empty task leaves that a scavenge does not collect and a mark-compact
 * does (round 28 `survivors`), with the server in this process as bench/empty-task-gc.ts runs
 * it (compiled the same way: add this file to bench/tsconfig.children.json's files in a scratch
 * copy). Neither moves with the machine's load.
 * - Bytes per task allocated outside the young generation (old, code and large-object space):
 *   the heap's spaces read every millisecond over the measured tasks, summing their growth over
 *   the intervals no GC fell in. Such objects are never copied by a scavenge, and die only at a
 *   mark-compact: a sampling heap profile that counts what scavenges did not collect shows them
 *   as survivors. On Node 20 each AbortSignal is one: its constructor sets the prototype of an
 *   EventTarget and adds properties, and V8 gives every signal hidden classes of its own (maps
 *   live in old space); the last line measures that alone, per `new AbortController().signal`.
 * - Per task, the weak holds Node makes for listeners (`[kWeakHandler]` options: util.aborted,
 *   AbortSignal.any, stream operators, `{ signal }` options of addEventListener): each is a
 *   WeakRef and a FinalizationRegistry cell, targets a scavenge may keep. Counted by wrapping
 *   EventTarget.prototype.addEventListener and AbortSignal.any before the server is made.
 */
import { loadavg } from 'node:os';
import { getHeapSpaceStatistics } from 'node:v8';
import { startInProcessServer } from './lib/in-process-server';

const OUTSIDE_YOUNG = ['old_space', 'code_space', 'large_object_space'] as const;

type Spaces = Record<string, number>;

function spaces(): Spaces {
  const used: Spaces = {};
  for (const space of getHeapSpaceStatistics()) used[space.space_name] = space.space_used_size;
  return used;
}

/** Sums each space's growth between reads every millisecond, leaving out the intervals a GC fell in (one space shrank). */
function watchOutsideYoung(): { stop: () => { bytes: Spaces; intervals: number; skipped: number } } {
  const bytes: Spaces = Object.fromEntries(OUTSIDE_YOUNG.map((name) => [name, 0]));
  let intervals = 0;
  let skipped = 0;
  let last = spaces();
  const read = (): void => {
    const now = spaces();
    if (now.new_space < last.new_space || OUTSIDE_YOUNG.some((name) => now[name] < last[name])) skipped += 1;
    else {
      intervals += 1;
      for (const name of OUTSIDE_YOUNG) bytes[name] += now[name] - last[name];
    }
    last = now;
  };
  const timer = setInterval(read, 1);
  return {
    stop: () => {
      clearInterval(timer);
      read();
      return { bytes, intervals, skipped };
    },
  };
}

/** Counts listeners Node holds weakly (an options object with a set `kWeak` symbol), listeners with a signal, and AbortSignal.any calls. */
function countWeakHolds(): Record<string, number> {
  const counts = { weakListeners: 0, listenersWithSignal: 0, abortSignalAny: 0 };
  const add = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function (this: EventTarget, ...args: Parameters<EventTarget['addEventListener']>) {
    const options = args[2];
    if (typeof options === 'object' && options !== null) {
      const weak = Object.getOwnPropertySymbols(options).find((symbol) => symbol.description === 'kWeak');
      if (weak && (options as Record<symbol, unknown>)[weak]) counts.weakListeners += 1;
      if (options.signal) counts.listenersWithSignal += 1;
    }
    return add.apply(this, args);
  };
  const any = AbortSignal.any.bind(AbortSignal);
  AbortSignal.any = (signals) => {
    counts.abortSignalAny += 1;
    return any(signals);
  };
  return counts;
}

/** Bytes outside the young generation per `new AbortController().signal`, made in batches a scavenge may fall between. */
async function perSignal(signals: number): Promise<number> {
  let kept: AbortSignal[] = [];
  const watch = watchOutsideYoung();
  for (let i = 0; i < signals; i += 1) {
    kept.push(new AbortController().signal);
    if (kept.length === 500) {
      kept = [];
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }
  const { bytes } = watch.stop();
  return OUTSIDE_YOUNG.reduce((sum, name) => sum + bytes[name], 0) / signals;
}

async function main(): Promise<void> {
  const tasks = Number(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 4_000);
  const option = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const target = option('target') ?? 'toolstream';
  const counts = countWeakHolds();
  const server = await startInProcessServer(target);
  try {
    await server.emptyTasks(Number(option('warm') ?? 8_000));
    const before = { ...counts };
    const watch = watchOutsideYoung();
    await server.emptyTasks(tasks);
    const { bytes, intervals, skipped } = watch.stop();
    const outside = OUTSIDE_YOUNG.map((name) => `${name} ${(bytes[name] / tasks).toFixed(0)} B`).join(', ');
    console.log(`${target}: allocated outside the young generation per task: ${outside} (${intervals} intervals read, ${skipped} with a GC left out)`);
    const holds = Object.entries(counts).map(([name, n]) => `${name} ${((n - before[name as keyof typeof counts]) / tasks).toFixed(2)}`);
    console.log(`${target}: per task ${holds.join(', ')}; load average ${loadavg()[0].toFixed(1)}`);
  } finally {
    await server.stop();
  }
  console.log(`AbortSignal: ${(await perSignal(20_000)).toFixed(0)} B outside the young generation per new AbortController().signal (Node ${process.version})`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);
