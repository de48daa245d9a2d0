/**
 * 4. Full agent run: DeepAgentExecutor's overhead over consuming the same LangGraph agent's
 * stream bare. One compiled agent (ScriptedChatModel, a zero-latency tool) is streamed with
 * the executor's stream modes either straight (`for await` over agent.stream) or through
 * DeepAgentExecutor.run, which adds frame tracking, hygiene and the events.
 *
 * How, so that the machine's noise hits both sides alike (docs/performance.md, "How the
 * executor overhead is measured"): the two sides run in pairs, back to back, the order swapped
 * from one pair to the next, in one process; the warm-up runs pairs until the runs stop getting
 * cheaper; each repetition runs pairs until each side has used its CPU budget; a
 * repetition's figure is taken pair by pair: the trimmed mean of each pair's executor-to-bare
 * ratio (on a log scale; the highest and lowest fifth of the pairs left out, GC included in
 * every pair kept), so what slowed both runs of a pair cancels out; the target is met only
 * when the worst repetition meets it.
 */
import { HumanMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { createToolAgent, DeepAgentExecutor, ScriptedChatModel, type MessagesAgent, type ScriptedTurn } from '../../src/executor';
import type { BenchConfig } from '../lib/config';
import { FRAMES_PER_TOOL_CALL } from '../lib/scenario';
import { spread, trimmedMean, type Spread } from '../lib/stats';
import { untilSteady, type Batch } from '../lib/steady';

/**
 * Ten model turns stay within LangGraph's default recursion limit (25 steps), which the
 * executor does not raise: a run of more tool-calling turns than 12 ends in GraphRecursionError.
 */
const TURNS = 10;
export type AgentShape = `${typeof TURNS} turns` | '1 turn';

export interface ExecutorOverheadRow {
  /** How the model asks for the tool calls: spread over ten model turns, or all at once. */
  shape: AgentShape;
  toolCalls: number;
  /** Runs per side in the smallest repetition (each runs until its CPU budget is spent). */
  runs: number;
  /** Each repetition's trimmed mean of CPU per run (ms). */
  bareMsPerRun: Spread;
  executorMsPerRun: Spread;
  /**
   * Each repetition's overhead: the trimmed mean of its pairs' log(executor / bare), as a ratio
   * less one (pairedOverheadPercent).
   */
  overheadPercent: Spread;
  /** Each repetition's executor trimmed mean over its bare trimmed mean, less one: the figure until round 15, kept for comparison. */
  unpairedOverheadPercent: Spread;
}

export type ExecutorOverheadResult = ExecutorOverheadRow[];

const SHAPES: readonly AgentShape[] = [`${TURNS} turns`, '1 turn'];

const benchTool = tool(async ({ seq }: { seq: number }) => JSON.stringify({ seq }), {
  name: 'bench_tool',
  description: 'answers at once',
  schema: z.object({ seq: z.number() }),
});

function script(shape: AgentShape, toolCalls: number): ScriptedTurn[] {
  const turnCount = shape === '1 turn' ? 1 : TURNS;
  const perTurn = Math.ceil(toolCalls / turnCount);
  const turns: ScriptedTurn[] = [];
  for (let first = 0; first < toolCalls; first += perTurn) {
    const seqs = Array.from({ length: Math.min(perTurn, toolCalls - first) }, (_, i) => first + i);
    turns.push({ toolCalls: seqs.map((seq) => ({ name: benchTool.name, args: { seq } })) });
  }
  turns.push({ text: 'done' });
  return turns;
}

/**
 * CPU time of one run (ms). CPU, not wall time: LangGraph's loop yields to timers between
 * steps, and the machine may be shared. (A forced GC before each run made it worse: V8's
 * sweeper threads then run during the timed run and count as process CPU.)
 */
async function timed(run: () => Promise<void>): Promise<number> {
  const start = process.cpuUsage();
  await run();
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1000;
}

/** The agent streamed bare with the executor's stream modes; `into` keeps the chunks when given. */
export async function streamBare(agent: MessagesAgent, id: string, into?: unknown[]): Promise<void> {
  const stream = await agent.stream(
    { messages: [new HumanMessage('go')] },
    { streamMode: ['values', 'tools', 'messages', 'custom'], signal: new AbortController().signal, recursionLimit: 200, configurable: { thread_id: id } },
  );
  for await (const chunk of stream) into?.push(chunk);
}

export function bareRun(agent: MessagesAgent, id: string): Promise<number> {
  return timed(() => streamBare(agent, id));
}

/** One executor run; checks it really produced every frame and the reply. */
export function executorRun(executor: DeepAgentExecutor, id: string, toolCalls: number): Promise<number> {
  return timed(() => executorRunChecked(executor, id, toolCalls));
}

function executorRunChecked(executor: DeepAgentExecutor, id: string, toolCalls: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let frames = 0;
    let replied = false;
    executor.run('go', { correlationId: id }).subscribe({
      next: (event) => {
        if (event.type === 'toolFrame') frames++;
        else if (event.type === 'reply') replied = true;
        else if (event.type === 'error') reject(new Error(`executor run failed: ${event.error}`));
      },
      error: reject,
      complete: () => {
        const expected = toolCalls * FRAMES_PER_TOOL_CALL;
        if (!replied || frames !== expected) reject(new Error(`executor run gave ${frames} of ${expected} frames, reply ${replied}`));
        else resolve();
      },
    });
  });
}

/** The agent and executor of one model script, as the section measures them. */
export function agentOf(shape: AgentShape, toolCalls: number): { agent: MessagesAgent; executor: DeepAgentExecutor } {
  const agent = createToolAgent(new ScriptedChatModel({ turns: script(shape, toolCalls) }), [benchTool]);
  return { agent, executor: new DeepAgentExecutor(agent, { agent }) };
}

/**
 * CPU each side uses per repetition, at least (ms): about 65 one-turn runs or 28 ten-turn runs
 * per side in a full run on a quiet machine, where 24 runs of each left repetitions 10 % apart
 * with no change.
 */
export function sideCpuBudgetMs(config: BenchConfig): number {
  return config.quick ? 150 : 1_200;
}

const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);

/**
 * The overhead of one repetition, pair by pair: each pair's two runs ran back to back, so a
 * stretch of load, a slower CPU phase or a GC that spans both slows both, and their ratio
 * keeps what the executor adds. The trimmed mean of the pairs' log-ratios (the highest and
 * lowest fifth left out, which treats a pair whose bare run was slowed like one whose executor
 * run was) is taken back to a ratio, less one, in per cent.
 */
export function pairedOverheadPercent(bare: readonly number[], executor: readonly number[]): number {
  if (bare.length !== executor.length || bare.length === 0) throw new Error('pairedOverheadPercent needs the runs of whole pairs');
  const logRatios = bare.map((b, i) => Math.log(executor[i] / b));
  return (Math.exp(trimmedMean(logRatios)) - 1) * 100;
}

/**
 * Pairs of one bare and one executor run, back to back, the order swapped from one pair to the
 * next (neither side always runs on the other's garbage or right after a pause), until there
 * are `minRuns` pairs and each side has used `cpuMs` of CPU.
 */
export async function pairedRuns(
  bareSide: (i: number) => Promise<number>,
  executorSide: (i: number) => Promise<number>,
  minRuns: number,
  cpuMs: number,
): Promise<{ bare: number[]; executor: number[] }> {
  const bare: number[] = [];
  const executor: number[] = [];
  // Bounded whatever the machine does: a run never costs a tenth of what one costs here.
  const maxRuns = Math.max(minRuns, 2_000);
  for (let i = 0; i < maxRuns && (i < minRuns || sum(bare) < cpuMs || sum(executor) < cpuMs); i++) {
    if (i % 2 === 0) {
      bare.push(await bareSide(i));
      executor.push(await executorSide(i));
    } else {
      executor.push(await executorSide(i));
      bare.push(await bareSide(i));
    }
  }
  return { bare, executor };
}

/** Pairs per window of the warm-up's steadiness check. */
const WARM_UP_WINDOW = 10;

/**
 * Runs pairs until both sides' code is compiled and the heap at its working size: at least
 * `minRuns` pairs and `cpuMs` of CPU per side, then windows of pairs until a window's bare
 * runs no longer cost 3 % less than the previous window's (at most twice `cpuMs` per side;
 * bench/lib/steady.ts, which the empty-task section's warm-up shares).
 * A ten-turn run kept getting cheaper for about 130 runs (97 ms for the first 16, 39 ms after
 * 140, load ~10), and the executor side read 12-13 % over the bare one during that time, which
 * was measuring the JIT, not the executor.
 */
export async function warmUp(
  bareSide: (i: number) => Promise<number>,
  executorSide: (i: number) => Promise<number>,
  minRuns: number,
  cpuMs: number,
): Promise<void> {
  const first = await pairedRuns(bareSide, executorSide, minRuns, cpuMs);
  const window = async (): Promise<Batch> => {
    const pairs = await pairedRuns(bareSide, executorSide, WARM_UP_WINDOW, 0);
    return { figure: trimmedMean(pairs.bare), cost: sum(pairs.bare) };
  };
  await untilSteady(window, { previous: trimmedMean(first.bare.slice(-WARM_UP_WINDOW)), tolerance: 0.03, maxCost: 2 * cpuMs - sum(first.bare) });
}

export async function measureExecutorOverhead(config: BenchConfig, log: (line: string) => void): Promise<ExecutorOverheadResult> {
  const rows: ExecutorOverheadRow[] = [];
  const toolCalls = config.executorToolCalls;
  const budget = sideCpuBudgetMs(config);
  for (const shape of SHAPES) {
    const { agent, executor } = agentOf(shape, toolCalls);
    const bareSide = (id: string) => (i: number) => bareRun(agent, `${id}-${i}`);
    const executorSide = (id: string) => (i: number) => executorRun(executor, `${id}-${i}`, toolCalls);
    await warmUp(bareSide('warm-bare'), executorSide('warm-exec'), config.executorWarmUpRuns, 2 * budget);
    const bareMeans: number[] = [];
    const executorMeans: number[] = [];
    const overheads: number[] = [];
    const unpaired: number[] = [];
    const runs: number[] = [];
    for (let rep = 0; rep < config.executorReps; rep++) {
      const measured = await pairedRuns(bareSide(`bare-${rep}`), executorSide(`exec-${rep}`), config.executorRuns, budget);
      const bare = trimmedMean(measured.bare);
      const withExecutor = trimmedMean(measured.executor);
      bareMeans.push(bare);
      executorMeans.push(withExecutor);
      overheads.push(pairedOverheadPercent(measured.bare, measured.executor));
      unpaired.push((withExecutor / bare - 1) * 100);
      runs.push(measured.bare.length);
    }
    const row: ExecutorOverheadRow = {
      shape,
      toolCalls,
      runs: Math.min(...runs),
      bareMsPerRun: spread(bareMeans),
      executorMsPerRun: spread(executorMeans),
      overheadPercent: spread(overheads),
      unpairedOverheadPercent: spread(unpaired),
    };
    rows.push(row);
    log(
      `executor ${shape}, ${toolCalls} calls, ${runs.join('/')} runs per side: overhead ${overheads.map((o) => o.toFixed(1)).join(', ')} % ` +
        `(unpaired ${unpaired.map((o) => o.toFixed(1)).join(', ')} %; bare ${row.bareMsPerRun.median.toFixed(2)} ms)`,
    );
  }
  return rows;
}
