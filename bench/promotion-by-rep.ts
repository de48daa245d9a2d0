/**
 * `node -r ts-node/register/transpile-only bench/promotion-by-rep.ts <log> [<log>...] [--frames=20000] [--ranges=1-5,6-12]`
 *
 * What a paced row's server promoted, and how often it marked, repetition by repetition, read from
 * the log of `bench/paced-latency.ts ... --server-flags=--trace-gc-nvp` (or of
 * `bench/side-redis-history.ts ...` with the same flag) of ONE server: V8's nvp lines go to the
 * script's stdout. Per repetition: the sum of `promoted` over the scavenges logged since the
 * previous repetition's line, per frame (`--frames`, default the paced row's 100 streams × 100
 * calls × 2 frames), the mark-compacts logged since then (nvp's `gc=mc`), the repetition's own
 * GC events other than scavenges (its line's `other GCs`: about two per mark-compact), its p99
 * and the load. Then, per range of repetitions (`--ranges`, over every log given together):
 * promoted bytes per frame min / median / max, the mark-compacts and other GCs in all, and the
 * p99 min / median / max with the load's range. Counts, not times: they
 * move little with the machine's load (what is in flight when a scavenge runs still does).
 * Repetition 0 of paced-latency.ts also holds the server's start and warm-up; side-redis-history's
 * repetitions each hold their warm-up's scavenges.
 */
import { readFileSync } from 'node:fs';
import { median } from './lib/stats';

interface Rep {
  rep: number;
  promotedPerFrame: number;
  markCompacts: number;
  otherGcs: number;
  p99Ms: number;
  load: number;
}

function option(name: string): string | undefined {
  return process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
}

/** The repetitions of one log, in order. */
export function repsOf(text: string, frames: number): Rep[] {
  const reps: Rep[] = [];
  let promoted = 0;
  let markCompacts = 0;
  for (const line of text.split('\n')) {
    const gc = / gc=(\w+) /.exec(line);
    if (gc) {
      if (gc[1] === 's') promoted += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0);
      else if (gc[1] === 'mc') markCompacts += 1;
      continue;
    }
    const rep = /rep (\d+)\b.*?p99 ([\d.]+) ms/.exec(line);
    if (!rep) continue;
    reps.push({
      rep: Number(rep[1]),
      promotedPerFrame: promoted / frames,
      markCompacts,
      otherGcs: Number(/other GCs (\d+)/.exec(line)?.[1] ?? NaN),
      p99Ms: Number(rep[2]),
      load: Number(/load ([\d.]+)/.exec(line)?.[1] ?? NaN),
    });
    promoted = 0;
    markCompacts = 0;
  }
  return reps;
}

function main(): void {
  const files = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  const frames = Number(option('frames') ?? 100 * 100 * 2);
  const ranges = (option('ranges') ?? '1-5,6-12').split(',').map((range) => range.split('-').map(Number) as [number, number]);
  const all: Rep[] = [];
  for (const file of files) {
    const reps = repsOf(readFileSync(file, 'utf8'), frames);
    console.log(`${file}:`);
    for (const r of reps) console.log(`  rep ${r.rep}: promoted ${r.promotedPerFrame.toFixed(0)} B/frame, mark-compacts ${r.markCompacts}, other GCs ${r.otherGcs}, p99 ${r.p99Ms.toFixed(2)} ms, load ${r.load}`);
    const others = reps.reduce((sum, r) => sum + r.otherGcs, 0);
    const marks = reps.reduce((sum, r) => sum + r.markCompacts, 0);
    console.log(`  in all, ${reps.length} repetitions: mark-compacts ${marks}, other GCs ${others}`);
    all.push(...reps);
  }
  for (const [from, to] of ranges) {
    const inRange = all.filter((r) => r.rep >= from && r.rep <= to);
    if (inRange.length === 0) continue;
    const promoted = inRange.map((r) => r.promotedPerFrame).sort((a, b) => a - b);
    const others = inRange.reduce((sum, r) => sum + r.otherGcs, 0);
    const marks = inRange.reduce((sum, r) => sum + r.markCompacts, 0);
    const p99 = inRange.map((r) => r.p99Ms).sort((x, y) => x - y);
    const load = inRange.map((r) => r.load).sort((x, y) => x - y);
    console.log(
      `reps ${from}-${to} (${inRange.length} over ${files.length} log(s)): promoted ${promoted[0].toFixed(0)} / ${median(promoted).toFixed(0)} / ${promoted[promoted.length - 1].toFixed(0)} B/frame (min / median / max), mark-compacts ${marks}, other GCs ${others}; ` +
        `p99 ${p99[0].toFixed(2)} / ${median(p99).toFixed(2)} / ${p99[p99.length - 1].toFixed(2)} ms at load ${load[0]}-${load[load.length - 1]}`,
    );
  }
}

main();
