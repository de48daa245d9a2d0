/**
 * `npm run bench [-- --quick] [--only=<section>,…] [--budget-min=N]`
 *
 * Runs every section (or those named), prints the report, and writes results.json (every
 * repetition of every figure), RESULTS.md and chart.svg: in bench/ for a full run of every
 * section, in bench/.work/quick or bench/.work/partial otherwise. Servers and load each run
 * in a child process of their own, on loopback. Exits non-zero when any load stream failed,
 * saw an invalid frame or the wrong number of frames (the report says which), or a section threw.
 * With --budget-min, sections that would start past N minutes are skipped, and the report says so.
 * CPU profiles of the per-request cases: `npm run bench:profile` (bench/profile.ts).
 */
import { execSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { benchConfig, type BenchConfig } from './lib/config';
import { TARGETS, type Target } from './lib/ipc';
import { compileChildren } from './lib/compile-children';
import { LoadProcess, measureExecutorOverheadInChild, useCompiledChildren } from './lib/processes';
import { checkTargets, type BenchResults } from './lib/report';
import type { BenchSection } from './lib/section';
import { BenchRedis } from './lib/redis';
import { ServerPool } from './lib/server-pool';
import { writeReport } from './lib/write-report';
import { answerStreamingSection } from './sections/answer-streaming';
import { CURVE_TARGETS, CURVE_TARGETS_WITH_REDIS, measureCurves } from './sections/curves';
import { measureEmptyTask } from './sections/empty-task';
import { measureIdleMemory } from './sections/idle-memory';
import { measureSideBySide } from './sections/side-by-side';
import { measureTaskMemory } from './sections/task-memory';
import { observabilitySection } from './sections/observability';
import { redisModeSection } from './sections/redis-mode';

/** Sections other parts of the project contribute (bench/lib/section.ts), run after the built-in ones. */
const EXTRA_SECTIONS: readonly BenchSection[] = [answerStreamingSection, redisModeSection, observabilitySection];

type Log = (line: string) => void;
type Builtin = (config: BenchConfig, pool: ServerPool, results: BenchResults, log: Log) => Promise<void>;

/**
 * The built-in sections, in the order they run. The executor overhead goes first, in a process
 * of its own, while no server is up; the servers the next sections share then start together.
 */
const BUILTIN: ReadonlyArray<[string, Builtin]> = [
  ['executor', async (c, _p, r, l) => {
    l('executor overhead (in a fresh process)');
    r.executorOverhead = await measureExecutorOverheadInChild(c);
  }],
  ['empty', async (c, p, r, l) => void (r.emptyTask = await measureEmptyTask(c, p, l))],
  ['curves', async (c, p, r, l) => void (r.curves = await measureCurves(c, p, p.redis ? CURVE_TARGETS_WITH_REDIS : CURVE_TARGETS, l))],
  ['side', async (c, p, r, l) => void (r.sideBySide = await measureSideBySide(c, p, p.redis !== undefined, l))],
  ['memory', async (c, p, r, l) => void (r.taskMemory = await measureTaskMemory(c, p, p.redis ? ['toolstream', 'toolstream-redis'] : ['toolstream'], l))],
  ['idle', async (c, p, r, l) => void (r.idleMemory = await measureIdleMemory(c, p, l))],
];

/** The warm servers each section shares through the pool (started together before it). */
function sharedTargets(section: string, withRedis: boolean): Target[] {
  const redis: Target[] = withRedis ? ['toolstream-redis'] : [];
  switch (section) {
    case 'empty':
      return [...TARGETS];
    case 'curves':
      return [...(withRedis ? CURVE_TARGETS_WITH_REDIS : CURVE_TARGETS)];
    case 'side':
      return [...TARGETS, ...redis];
    case 'redis':
      return ['toolstream', ...redis];
    default:
      return [];
  }
}

const SECTIONS = [...BUILTIN.map(([name]) => name), ...EXTRA_SECTIONS.map((s) => s.name)];

function parseArgs(argv: string[]): { quick: boolean; sections: string[]; budgetS?: number } {
  let quick = false;
  let budgetS: number | undefined;
  let sections = [...SECTIONS];
  for (const arg of argv) {
    if (arg === '--quick') quick = true;
    else if (arg.startsWith('--budget-min=')) budgetS = Number(arg.slice('--budget-min='.length)) * 60;
    else if (arg.startsWith('--only=')) {
      const wanted = arg.slice('--only='.length).split(',');
      const unknown = wanted.filter((s) => !SECTIONS.includes(s));
      if (unknown.length) throw new Error(`unknown section ${unknown.join(', ')}; sections: ${SECTIONS.join(', ')}`);
      sections = wanted;
    } else throw new Error(`unknown argument ${arg}; use --quick, --only=${SECTIONS.join(',')}`);
  }
  return { quick, sections, budgetS };
}

function fdLimit(): string {
  try {
    return execSync('ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"; ulimit -n', { shell: '/bin/bash' }).toString().trim();
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<number> {
  const { quick, sections, budgetS } = parseArgs(process.argv.slice(2));
  const config = benchConfig(quick);
  const started = Date.now();
  const log: Log = (line) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);
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
      sections: [],
    },
  };
  log(`bench ${quick ? '(quick)' : '(full)'}: ${sections.join(', ')}; fd limit for children ${results.meta.fdLimit}`);
  useCompiledChildren(compileChildren());
  log('compiled the servers, the load generator and the executor child (bench/.work/build)');
  // Redis-mode rows run beside the in-memory ones when redis-server is installed.
  const redis = await BenchRedis.start();
  if (redis) process.env.BENCH_REDIS_URL = redis.url;
  else log('redis-server not found: no Redis-mode rows');
  const load = await LoadProcess.start();
  const pool = new ServerPool(load, redis);
  let failure: unknown;
  const skipped: string[] = [];
  const timed = async (name: string, body: () => Promise<void>): Promise<void> => {
    const t0 = Date.now();
    if (budgetS !== undefined && (t0 - started) / 1000 > budgetS) {
      log(`section ${name} skipped: the run is past its --budget-min`);
      skipped.push(name);
      return;
    }
    const loadAverageAtStart = loadavg()[0];
    log(`section ${name} (load average ${loadAverageAtStart.toFixed(1)})`);
    await pool.prepare(sharedTargets(name, redis !== undefined));
    await body();
    results.meta.sections.push({ name, durationS: Math.round((Date.now() - t0) / 1000), loadAverageAtStart, loadAverageAtEnd: loadavg()[0] });
  };
  try {
    for (const [name, measure] of BUILTIN) {
      if (sections.includes(name)) await timed(name, () => measure(config, pool, results, log));
    }
    for (const section of EXTRA_SECTIONS) {
      if (!sections.includes(section.name)) continue;
      await timed(section.name, async () => {
        (results.extra ??= {})[section.name] = await section.run({ config, pool, log });
      });
    }
  } catch (err) {
    // What was measured is still written, marked as an incomplete run.
    failure = err;
    console.error(err instanceof Error ? err.stack : err);
  } finally {
    await pool.stopAll();
    await load.stop();
    await redis?.stop();
  }
  results.meta.durationS = Math.round((Date.now() - started) / 1000);
  if (skipped.length) results.meta.skipped = skipped;
  results.meta.loadAverageAtEnd = loadavg()[0];
  results.validity = load.ledger.summary();
  results.targets = checkTargets(results, config);
  // Only a full run of every section replaces the committed report; others write beside it.
  const complete = !quick && sections.length === SECTIONS.length;
  const dir = complete ? __dirname : join(__dirname, '.work', quick ? 'quick' : 'partial');
  mkdirSync(dir, { recursive: true });
  if (failure !== undefined) results.meta.failure = failure instanceof Error ? failure.message : String(failure);
  const written = writeReport(results, dir, complete);
  console.log(`\n${written.summary}`);
  log(`wrote results.json, RESULTS.md${written.chart ? ', chart.svg' : ''} in ${dir}${written.doc ? ', and the summary in docs/performance.md' : ''}`);
  if (!results.validity.ok) console.error(`bench: INVALID RUN: ${results.validity.errors.join('; ')}`);
  return failure === undefined && results.validity.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);
