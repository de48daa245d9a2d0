/**
 * 4. Full agent run: DeepAgentExecutor's overhead over consuming the same LangGraph agent's
 * stream bare. One compiled agent (ScriptedChatModel, a zero-latency tool) is streamed with
 * the executor's stream modes either straight (`for await` over agent.stream) or through
 * DeepAgentExecutor.run, which adds frame tracking, hygiene and the events. The two sides
 * alternate in one process after a warm-up; each repetition's figure is the median CPU time
 * per run of its runs, and the target is met only when the worst repetition meets it.
 */
import { HumanMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { createToolAgent, DeepAgentExecutor, ScriptedChatModel, type MessagesAgent, type ScriptedTurn } from '../../src/executor';
import type { BenchConfig } from '../lib/config';
import { FRAMES_PER_TOOL_CALL } from '../lib/scenario';
import { median, spread, type Spread } from '../lib/stats';

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
  /** Runs per side in each repetition. */
  runs: number;
  /** Median CPU per run of each repetition. */
  bareMsPerRun: Spread;
  executorMsPerRun: Spread;
  /** Each repetition's executor median over its bare median, less one. */
  overheadPercent: Spread;
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

export async function measureExecutorOverhead(config: BenchConfig, log: (line: string) => void): Promise<ExecutorOverheadResult> {
  const rows: ExecutorOverheadRow[] = [];
  const toolCalls = config.executorToolCalls;
  for (const shape of SHAPES) {
    const { agent, executor } = agentOf(shape, toolCalls);
    // The executor's own paths take a few dozen runs to be compiled; before that a run can
    // cost twice as much, which would be measuring the JIT.
    for (let i = 0; i < config.executorWarmUpRuns; i++) {
      await bareRun(agent, `warm-bare-${i}`);
      await executorRun(executor, `warm-exec-${i}`, toolCalls);
    }
    const bareMedians: number[] = [];
    const executorMedians: number[] = [];
    const overheads: number[] = [];
    for (let rep = 0; rep < config.executorReps; rep++) {
      const bare: number[] = [];
      const withExecutor: number[] = [];
      for (let i = 0; i < config.executorRuns; i++) {
        // Alternate which side goes first, so neither always runs on the other's garbage.
        const [b, e] =
          i % 2 === 0
            ? [await bareRun(agent, `bare-${rep}-${i}`), await executorRun(executor, `exec-${rep}-${i}`, toolCalls)]
            : [await executorRun(executor, `exec-${rep}-${i}`, toolCalls), await bareRun(agent, `bare-${rep}-${i}`)].reverse();
        bare.push(b);
        withExecutor.push(e);
      }
      bareMedians.push(median(bare));
      executorMedians.push(median(withExecutor));
      overheads.push((median(withExecutor) / median(bare) - 1) * 100);
    }
    const row: ExecutorOverheadRow = {
      shape,
      toolCalls,
      runs: config.executorRuns,
      bareMsPerRun: spread(bareMedians),
      executorMsPerRun: spread(executorMedians),
      overheadPercent: spread(overheads),
    };
    rows.push(row);
    log(`executor ${shape}, ${toolCalls} calls: overhead ${overheads.map((o) => o.toFixed(1)).join(', ')} % (bare ${row.bareMsPerRun.median.toFixed(2)} ms)`);
  }
  return rows;
}
