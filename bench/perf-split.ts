/**
 * `node -r ts-node/register/transpile-only bench/perf-split.ts <perf.data> <units> [top=25]`
 *
 * Where a process's CPU went, from a `perf record` file (bench/lib/perf-record.ts; `--perf=FILE`
 * of bench/empty-task-gc.ts and bench/frame-cost.ts): every sample's time (its period, on the
 * software clock) by what it was doing, for the main thread and the other threads apart, in µs
 * per unit (the tasks or frames the recording covered). Kinds: the kernel; the garbage
 * collector; compiling; inline caches and property lookups; JSON; strings; optimised JavaScript
 * by where it lives (toolstream's src/, the bench's, each package, Node's internals); baseline
 * or interpreted JavaScript; other builtins; Node and libuv; libc; the rest of V8. Then the
 * symbols with the most time. Self time only: a function's callees count as theirs.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const KINDS: [string, RegExp][] = [
  ['JSON', /Json/],
  ['Node and libuv', /node::|^uv_|^uv__|llhttp/],
  ['garbage collector', /Scaveng|Heap::|MarkCompact|Sweeper|Marking|Worklist|Evacuat|MemoryChunk|PagedSpace|NewSpace|SemiSpace|MemoryAllocator|RememberedSet|SlotSet|BodyDescriptor|LargeObject|RecordWrite|Unmapper|MinorM|GCTracer|ObjectVisitor|IterateP/],
  ['compiling', /Compil|compiler::|Maglev|Zone|BytecodeGenerator|BytecodeArray|internal::Parser|PreParser|Scanner/],
  ['inline caches, lookups', /IC_|IC::|StubCache|LookupIterator|FeedbackNexus|LoadIC|StoreIC|KeyedHas/],
  ['strings', /String|Utf8/],
];

/** What a sample was doing, from its symbol and where the code lives. */
export function kindOf(symbol: string, dso: string): string {
  if (dso.includes('kernel')) return 'kernel';
  if (dso.startsWith('/tmp/perf-') || dso.startsWith('[JIT]')) {
    if (!symbol.startsWith('JS:*')) return 'JavaScript, baseline or interpreted';
    return `JavaScript: ${areaOf(symbol)}`;
  }
  if (/libc\.so|libstdc\+\+|ld-linux|libm\.so/.test(dso)) return 'libc';
  if (/^Builtins_Interpreter/.test(symbol)) return 'JavaScript, baseline or interpreted';
  for (const [kind, pattern] of KINDS) if (pattern.test(symbol)) return kind;
  if (symbol.startsWith('Builtins_')) return 'other builtins';
  return 'V8, other';
}

/** Where an optimised function lives: toolstream's src/, the bench, a package, Node's internals. */
function areaOf(symbol: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(symbol);
  if (pkg) return pkg[1];
  if (/\/src\//.test(symbol)) return 'toolstream src/';
  if (/\/bench\//.test(symbol)) return 'bench';
  if (/ node:/.test(symbol)) return "Node's internals";
  return 'other';
}

async function main(): Promise<void> {
  const [file, unitsArg, topArg = '25'] = process.argv.slice(2);
  const units = Number(unitsArg);
  if (!file || !(units > 0)) throw new Error('usage: bench/perf-split.ts <perf.data> <units> [top]');
  const script = spawn('perf', ['script', '-i', file, '-F', 'pid,tid,period,ip,sym,dso', '-G'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const byKind = new Map<string, { main: number; other: number }>();
  const bySymbol = new Map<string, number>();
  let total = 0;
  let main = 0;
  for await (const line of createInterface({ input: script.stdout })) {
    const sample = /^\s*(\d+)\/(\d+)\s+(\d+)\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$/.exec(line);
    if (!sample) continue;
    const [, pid, tid, period, symbol, dso] = sample;
    const ns = Number(period);
    const kind = kindOf(symbol, dso);
    const entry = byKind.get(kind) ?? { main: 0, other: 0 };
    if (pid === tid) {
      entry.main += ns;
      main += ns;
    } else entry.other += ns;
    byKind.set(kind, entry);
    bySymbol.set(`${kind} | ${symbol}`, (bySymbol.get(`${kind} | ${symbol}`) ?? 0) + ns);
    total += ns;
  }
  if (total === 0) throw new Error(`no samples read from ${file} (is perf installed, and the file from perf record?)`);
  const per = (ns: number): string => (ns / 1000 / units).toFixed(1);
  console.log(`${per(total)} µs of CPU sampled per unit (${units} units): main thread ${per(main)}, other threads ${per(total - main)}\n`);
  console.log('| kind | main thread µs | other threads µs |\n| --- | --- | --- |');
  for (const [kind, { main: m, other }] of [...byKind].sort((a, b) => b[1].main + b[1].other - (a[1].main + a[1].other))) {
    console.log(`| ${kind} | ${per(m)} | ${per(other)} |`);
  }
  console.log('\n| symbol (self time, all threads) | µs |\n| --- | --- |');
  for (const [symbol, ns] of [...bySymbol].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg))) {
    console.log(`| ${symbol.replace(/\|(?= )/, '·').replace(/\s+/g, ' ').slice(0, 140)} | ${per(ns)} |`);
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
