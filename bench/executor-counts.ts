/**
 * Counts per run of the executor-overhead section's two sides (bare LangGraph stream, and
 * DeepAgentExecutor.run), which do not move with the machine's load:
 *
 *   node --expose-gc --max-semi-space-size=128 -r ts-node/register/transpile-only bench/executor-counts.ts [--runs=40] [--warm=150] [--promises]
 *
 * - **allocated**: bytes the run allocates: a full GC before it, then the heap's growth over the
 *   run, with a young generation large enough that no scavenge falls inside it (a run whose heap
 *   shrank had one, and is counted as such instead);
 * - **kept**: what is still reachable after the run (a full GC after it, minus before);
 * - **promises** (with `--promises`, whose async hook slows every run): promises created per run;
 * - CPU per run, for orientation only (a forced GC before each run changes it).
 * With `--replay`, both sides run on the chunks of one recorded bare run (LangGraph taken out,
 * as bench/executor-breakdown.ts's mapping): what is left is the executor's own, to the byte.
 * `--side` (below) takes `--replay` too: the executor's own instructions per run.
 * Each figure is the median over the runs, each side's runs interleaved as in the section.
 */
import { createHook } from 'node:async_hooks';
import { getHeapStatistics } from 'node:v8';
import { DeepAgentExecutor, type MessagesAgent } from '../src/executor';
import { agentOf, bareRun, executorRun, streamBare, type AgentShape } from './sections/executor-overhead';
import { median } from './lib/stats';

function arg(name: string, fallback: number): number {
  const raw = process.argv.find((a) => a.startsWith(`--${name}=`));
  return raw ? Number(raw.slice(name.length + 3)) : fallback;
}

const collect = (): void => {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc (and --max-semi-space-size=128)');
  gc();
};

let promises = 0;
if (process.argv.includes('--promises')) {
  createHook({
    init(_id, type) {
      if (type === 'PROMISE') promises++;
    },
  }).enable();
}

interface Counts {
  allocated: number[];
  kept: number[];
  promises: number[];
  cpuMs: number[];
  scavenged: number;
}

const used = (): number => getHeapStatistics().used_heap_size;

async function counted(into: Counts, run: () => Promise<number>): Promise<void> {
  collect();
  const before = used();
  const promisesBefore = promises;
  const cpuMs = await run();
  const after = used();
  const promisesAfter = promises;
  collect();
  const kept = used() - before;
  if (after < before) into.scavenged++;
  else into.allocated.push(after - before);
  into.kept.push(kept);
  into.promises.push(promisesAfter - promisesBefore);
  into.cpuMs.push(cpuMs);
}

const empty = (): Counts => ({ allocated: [], kept: [], promises: [], cpuMs: [], scavenged: 0 });

function line(side: string, c: Counts): string {
  const kib = (v: number[]): string => (v.length ? (median(v) / 1024).toFixed(1) : '-');
  const range = (v: number[]): string => (v.length ? `${(Math.min(...v) / 1024).toFixed(1)}-${(Math.max(...v) / 1024).toFixed(1)}` : '-');
  return (
    `  ${side.padEnd(9)} allocated ${kib(c.allocated)} KiB (${range(c.allocated)}; ${c.scavenged} runs had a scavenge), ` +
    `kept ${kib(c.kept)} KiB, promises ${median(c.promises)}, CPU ${median(c.cpuMs).toFixed(2)} ms`
  );
}

/** The section's agent of this shape replaced by the chunks of one recorded bare run, and an executor over them. */
async function replayed(shape: AgentShape): Promise<{ agent: MessagesAgent; executor: DeepAgentExecutor }> {
  const chunks: unknown[] = [];
  await streamBare(agentOf(shape, 100).agent, 'record', chunks);
  const agent = {
    stream: () =>
      Promise.resolve(
        (async function* () {
          for (const chunk of chunks) yield chunk;
        })(),
      ),
  } as MessagesAgent;
  return { agent, executor: new DeepAgentExecutor(agent, { agent }) };
}

/**
 * `--side=bare|executor|none --measured=M [--replay]`: the warm-up pairs, then M runs of one side
 * only, and nothing else: under `valgrind --tool=cachegrind --cache-sim=no` (or callgrind), one
 * process per side and one with `none` (the same start-up and warm-up), whose instruction counts
 * subtract to M runs of each side. Whole runs need a long warm-up (V8 still compiles LangGraph's
 * and the executor's code after 30 pairs); replayed runs are cheap: `--warm=600 --measured=1500`.
 */
async function oneSide(side: string): Promise<void> {
  const measured = arg('measured', 10);
  const warm = arg('warm', 60);
  const shape = (process.argv.find((a) => a.startsWith('--shape='))?.slice('--shape='.length) ?? '1 turn') as AgentShape;
  const { agent, executor } = process.argv.includes('--replay') ? await replayed(shape) : agentOf(shape, 100);
  for (let i = 0; i < warm; i++) {
    await bareRun(agent, `warm-bare-${i}`);
    await executorRun(executor, `warm-exec-${i}`, 100);
  }
  for (let i = 0; i < measured && side !== 'none'; i++) {
    if (side === 'bare') await bareRun(agent, `bare-${i}`);
    else await executorRun(executor, `exec-${i}`, 100);
  }
}

async function main(): Promise<void> {
  const side = process.argv.find((a) => a.startsWith('--side='))?.slice('--side='.length);
  if (side !== undefined) return oneSide(side);
  const runs = arg('runs', 40);
  const warm = arg('warm', 150);
  const toolCalls = 100;
  const only = process.argv.find((a) => a.startsWith('--shape='))?.slice('--shape='.length);
  const shapes = (['10 turns', '1 turn'] as AgentShape[]).filter((s) => only === undefined || s.startsWith(only));
  const replay = process.argv.includes('--replay');
  for (const shape of shapes) {
    const { agent, executor } = replay ? await replayed(shape) : agentOf(shape, toolCalls);
    for (let i = 0; i < warm; i++) {
      await bareRun(agent, `warm-bare-${i}`);
      await executorRun(executor, `warm-exec-${i}`, toolCalls);
    }
    const bare = empty();
    const exec = empty();
    for (let i = 0; i < runs; i++) {
      if (i % 2 === 0) {
        await counted(bare, () => bareRun(agent, `bare-${i}`));
        await counted(exec, () => executorRun(executor, `exec-${i}`, toolCalls));
      } else {
        await counted(exec, () => executorRun(executor, `exec-${i}`, toolCalls));
        await counted(bare, () => bareRun(agent, `bare-${i}`));
      }
    }
    const diff = median(exec.allocated) - median(bare.allocated);
    console.log(`${shape}, ${toolCalls} tool calls${replay ? ' (replayed chunks)' : ''}, ${runs} runs per side after ${warm} warm-up pairs:`);
    console.log(line('bare', bare));
    console.log(line('executor', exec));
    console.log(
      `  executor - bare: ${(diff / 1024).toFixed(1)} KiB allocated (${((diff / median(bare.allocated)) * 100).toFixed(2)} %), ` +
        `${median(exec.promises) - median(bare.promises)} promises`,
    );
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
