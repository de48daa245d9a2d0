/**
 * `npm run bench [-- --quick] [--only=pipeline,side,idle,executor] [--profile]`
 *
 * Runs every section, prints a table, and writes bench/results.json, bench/RESULTS.md and
 * bench/chart.svg. Servers and load each run in a child process of their own, on loopback.
 * With --profile, toolstream's server processes write V8 CPU profiles to bench/.work/profiles
 * (read them with bench/profile-summary.ts).
 */
import { execSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { benchConfig } from './lib/config';
import { LoadProcess, measureExecutorOverheadInChild } from './lib/processes';
import { chart, checkTargets, markdownSummary, type BenchResults } from './lib/report';
import { ServerPool } from './lib/server-pool';
import { measureIdleMemory } from './sections/idle-memory';
import { measurePipelineCost } from './sections/pipeline-cost';
import { measureSideBySide } from './sections/side-by-side';

const SECTIONS = ['pipeline', 'side', 'idle', 'executor'] as const;
type Section = (typeof SECTIONS)[number];

function parseArgs(argv: string[]): { quick: boolean; profile: boolean; sections: Section[] } {
  let quick = false;
  let profile = false;
  let sections: Section[] = [...SECTIONS];
  for (const arg of argv) {
    if (arg === '--quick') quick = true;
    else if (arg === '--profile') profile = true;
    else if (arg.startsWith('--only=')) {
      const wanted = arg.slice('--only='.length).split(',');
      const unknown = wanted.filter((s) => !(SECTIONS as readonly string[]).includes(s));
      if (unknown.length) throw new Error(`unknown section ${unknown.join(', ')}; sections: ${SECTIONS.join(', ')}`);
      sections = wanted as Section[];
    } else throw new Error(`unknown argument ${arg}; use --quick, --profile, --only=${SECTIONS.join(',')}`);
  }
  return { quick, profile, sections };
}

function fdLimit(): string {
  try {
    return execSync('ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"; ulimit -n', { shell: '/bin/bash' }).toString().trim();
  } catch {
    return 'unknown';
  }
}

const README = join(__dirname, '..', 'README.md');
const README_START = '<!-- bench:results:start -->';
const README_END = '<!-- bench:results:end -->';

/** A full run of every section refreshes the figures in the README's Performance section. */
function updateReadme(summary: string): boolean {
  const readme = readFileSync(README, 'utf8');
  const start = readme.indexOf(README_START);
  const end = readme.indexOf(README_END);
  if (start === -1 || end < start) return false;
  const body = `${README_START}\n${summary.replace(/^### /gm, '#### ')}\n${README_END}`;
  writeFileSync(README, readme.slice(0, start) + body + readme.slice(end + README_END.length));
  return true;
}

async function main(): Promise<void> {
  const { quick, profile, sections } = parseArgs(process.argv.slice(2));
  const config = benchConfig(quick);
  const started = Date.now();
  const log = (line: string): void => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);
  const results: BenchResults = {
    meta: {
      date: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      quick,
      reps: config.reps,
      fdLimit: fdLimit(),
      loadAverageAtStart: loadavg()[0],
    },
  };
  log(`bench ${quick ? '(quick)' : '(full)'}: ${sections.join(', ')}; fd limit for children ${results.meta.fdLimit}`);
  const load = await LoadProcess.start();
  const pool = new ServerPool(load, profile ? join(__dirname, '.work', 'profiles') : undefined);
  try {
    if (sections.includes('pipeline')) results.pipelineCost = await measurePipelineCost(config, pool, log);
    if (sections.includes('side')) results.sideBySide = await measureSideBySide(config, pool, log);
    if (sections.includes('idle')) results.idleMemory = await measureIdleMemory(config, pool, log);
    await pool.stopAll();
    if (sections.includes('executor')) {
      log('executor overhead (in a fresh process)');
      results.executorOverhead = await measureExecutorOverheadInChild(config);
    }
  } finally {
    await pool.stopAll();
    await load.stop();
  }
  results.meta.durationS = Math.round((Date.now() - started) / 1000);
  results.meta.loadAverageAtEnd = loadavg()[0];
  results.targets = checkTargets(results, config);
  const dir = __dirname;
  writeFileSync(join(dir, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  const summary = markdownSummary(results);
  writeFileSync(join(dir, 'RESULTS.md'), `# Benchmark results\n\n${summary}\n`);
  const svg = chart(results);
  if (svg) writeFileSync(join(dir, 'chart.svg'), svg);
  console.log(`\n${summary}`);
  const readme = !quick && sections.length === SECTIONS.length && updateReadme(summary);
  log(`wrote bench/results.json, bench/RESULTS.md${svg ? ', bench/chart.svg' : ''}${readme ? ', README.md (Performance)' : ''}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
