/**
 * `node -r ts-node/register/transpile-only bench/paced-history.ts [--since=<ISO date>] [--target=toolstream-redis] [results.json ...]`
 *
 * The 100-stream paced rows of every committed full run, side by side: each version of
 * bench/results.json in git history (and any results.json given, e.g. a full run kept outside the
 * repository), full runs only, one per date, from `--since` on (default 2026-12-04T16:00Z: the
 * first full run after 07f8ad6 warmed every server again right before each paced run). For the
 * target (default toolstream-redis) it prints each repetition of the side section's row and of
 * the redis section's with what results.json kept beside its p99 (server CPU per frame,
 * scavenges, other GCs, the young generation at the start, run-queue waits), then per row: the
 * p99's median / min / max, the repetitions at or over 10 ms, the runs whose worst repetition
 * was; the p99 and CPU per frame by repetition index; the p99 of repetitions with and without
 * a major GC (other than a scavenge) in them. One full run is three repetitions: whether a row
 * "reads under 10 ms" in one run says little about the next when a tenth of its repetitions miss.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunRecord } from './lib/server-pool';

interface Results {
  meta: { date: string; quick: boolean };
  sideBySide?: { kind: string; streams: number; runs?: RunRecord[] }[];
  extra?: { redis?: { data: Record<string, { runs: Record<string, RunRecord[]> }> } };
}

interface Rep {
  row: 'side' | 'redis';
  date: string;
  run: RunRecord;
}

const TEN_MS = 10;

function option(name: string): string | undefined {
  return process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
}

/** Every version of bench/results.json in git history, newest first. */
function committedResults(): Results[] {
  const root = join(__dirname, '..');
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  return git('log', '--format=%H', '--', 'bench/results.json')
    .split('\n')
    .filter(Boolean)
    .flatMap((commit) => {
      try {
        return [JSON.parse(git('show', `${commit}:bench/results.json`)) as Results];
      } catch {
        return [];
      }
    });
}

function repsOf(results: Results[], since: string, target: string): Rep[] {
  const seen = new Set<string>();
  const reps: Rep[] = [];
  for (const r of results) {
    const date = r.meta.date;
    if (r.meta.quick || date < since || seen.has(date)) continue;
    seen.add(date);
    for (const row of r.sideBySide ?? []) {
      if (row.kind !== 'latency' || row.streams !== 100) continue;
      for (const run of row.runs ?? []) if (run.target === target) reps.push({ row: 'side', date, run });
    }
    for (const [label, data] of Object.entries(r.extra?.redis?.data ?? {})) {
      if (!label.includes('paced')) continue;
      for (const run of data.runs[target] ?? []) reps.push({ row: 'redis', date, run });
    }
  }
  return reps.sort((a, b) => a.date.localeCompare(b.date) || a.row.localeCompare(b.row) || a.run.rep - b.run.rep);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function summary(p99s: number[]): string {
  if (p99s.length === 0) return 'none';
  return `${p99s.length} repetitions, p99 median ${median(p99s).toFixed(2)} ms (min ${Math.min(...p99s).toFixed(2)}, max ${Math.max(...p99s).toFixed(2)}), ${p99s.filter((p) => p >= TEN_MS).length} at or over 10 ms`;
}

function line({ row, date, run }: Rep): string {
  const gc = run.gc;
  const wait = run.runQueueWaitMs;
  return (
    `${date.slice(0, 16)} ${row.padEnd(5)} rep ${run.rep + 1}: p99 ${run.latencyP99Ms.toFixed(2).padStart(6)} ms, ${run.serverCpuPerFrameUs.toFixed(1)} µs/frame` +
    (gc ? `, ${gc.scavenges} scavenges, ${gc.otherGcs} other GCs, young ${gc.newSpaceMiBAtStart.toFixed(1)} MiB at the start` : '') +
    (wait ? `, waited server ${Math.round(wait.server)} / Redis ${Math.round(wait.redis ?? NaN)} ms` : '') +
    `, load ${run.loadAverage.toFixed(1)}`
  );
}

function main(): void {
  const since = option('since') ?? '2026-12-04T16:00';
  const target = option('target') ?? 'toolstream-redis';
  const files = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  const results = [...committedResults(), ...files.map((file) => JSON.parse(readFileSync(file, 'utf8')) as Results)];
  const reps = repsOf(results, since, target);
  for (const rep of reps) console.log(line(rep));
  const dates = [...new Set(reps.map((r) => r.date))];
  console.log(`\n${dates.length} full runs since ${since}, ${target}:`);
  for (const row of ['side', 'redis'] as const) {
    const mine = reps.filter((r) => r.row === row);
    const missed = dates.filter((d) => mine.some((r) => r.date === d && r.run.latencyP99Ms >= TEN_MS));
    console.log(`- ${row} row: ${summary(mine.map((r) => r.run.latencyP99Ms))}; worst repetition at or over 10 ms in ${missed.length} of ${dates.length} runs (${missed.map((d) => d.slice(0, 16)).join(', ') || 'none'})`);
    for (const index of [0, 1, 2]) {
      const at = mine.filter((r) => r.run.rep === index);
      if (at.length) console.log(`  - repetition ${index + 1}: ${summary(at.map((r) => r.run.latencyP99Ms))}; ${median(at.map((r) => r.run.serverCpuPerFrameUs)).toFixed(1)} µs/frame median`);
    }
  }
  const withGc = reps.filter((r) => r.run.gc);
  console.log(`- with a major GC in the run: ${summary(withGc.filter((r) => (r.run.gc?.otherGcs ?? 0) > 0).map((r) => r.run.latencyP99Ms))}`);
  console.log(`- without: ${summary(withGc.filter((r) => r.run.gc?.otherGcs === 0).map((r) => r.run.latencyP99Ms))}`);
}

main();
