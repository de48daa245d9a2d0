/**
 * `npm run bench:executor-breakdown [-- --reps=5 --runs=80]`
 *
 * What the executor-overhead section's figure is made of (docs/performance.md), in one process,
 * on the section's own agents (100 tool calls, in ten model turns or in one):
 * - **overhead**: a run through DeepAgentExecutor against the bare LangGraph stream with the same
 *   stream modes, as the section measures it (runs interleaved, trimmed mean of CPU per run of
 *   each repetition);
 * - **A/A**: the bare stream against itself on the same alternating schedule: how far two
 *   identical sides drift apart on this machine, the noise floor of the figure above;
 * - **mapping**: the executor's own work alone, with LangGraph taken out: the chunks one bare run
 *   yielded, recorded, then replayed through DeepAgentExecutor (frame tracking, hygiene, events,
 *   answer, Observable, abort and context plumbing) and, for the base, consumed bare; the
 *   difference is shown in ms per run and as a share of the bare LangGraph run;
 * - **GC**: the garbage collector's pauses (perf_hooks `gc` entries) that fell inside the bare
 *   and the executor runs, median ms per run: what the executor's garbage costs on LangGraph's heap.
 */
import { performance, PerformanceObserver } from 'node:perf_hooks';
import { DeepAgentExecutor, type MessagesAgent } from '../src/executor';
import { agentOf, bareRun, executorRun, streamBare, warmUp, type AgentShape } from './sections/executor-overhead';
import { median, trimmedMean } from './lib/stats';

function arg(name: string, fallback: number): number {
  const raw = process.argv.find((a) => a.startsWith(`--${name}=`));
  return raw ? Number(raw.slice(name.length + 3)) : fallback;
}

const gcPauses: { start: number; end: number }[] = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcPauses.push({ start: entry.startTime, end: entry.startTime + entry.duration });
}).observe({ entryTypes: ['gc'] });

/** Run windows of each side, to attribute the GC pauses once they are reported (asynchronously). */
const windows = new Map<string, { start: number; end: number }[]>();

function gcMsPerRun(side: string): number {
  const perRun = (windows.get(side) ?? []).map((w) => gcPauses.filter((p) => p.start >= w.start && p.start < w.end).reduce((sum, p) => sum + p.end - p.start, 0));
  return median(perRun);
}

async function inWindow(side: string, run: () => Promise<number>): Promise<number> {
  const start = performance.now();
  const ms = await run();
  let list = windows.get(side);
  if (!list) windows.set(side, (list = []));
  list.push({ start, end: performance.now() });
  return ms;
}

/** Every chunk one bare run of the agent yields, with the modes the executor asks for. */
async function record(agent: MessagesAgent): Promise<unknown[]> {
  const chunks: unknown[] = [];
  await streamBare(agent, 'record', chunks);
  return chunks;
}

/** An agent that yields recorded chunks: LangGraph's work is done once, before the timing. */
function replayAgent(chunks: readonly unknown[]): MessagesAgent {
  return {
    stream: () =>
      Promise.resolve(
        (async function* () {
          for (const chunk of chunks) yield chunk;
        })(),
      ),
  };
}

const pct = (a: number, b: number): string => `${((a / b - 1) * 100).toFixed(1)} %`;

async function main(): Promise<void> {
  const reps = arg('reps', 5);
  const runs = arg('runs', 80);
  const toolCalls = 100;
  for (const shape of ['10 turns', '1 turn'] as AgentShape[]) {
    const { agent, executor } = agentOf(shape, toolCalls);
    const replay = replayAgent(await record(agent));
    const replayExecutor = new DeepAgentExecutor(replay, { agent: replay });
    await warmUp((i) => bareRun(agent, `warm-bare-${i}`), (i) => executorRun(executor, `warm-exec-${i}`, toolCalls), 20, 1_200);
    for (let i = 0; i < 40; i++) {
      await bareRun(replay, 'replay');
      await executorRun(replayExecutor, `warm-replay-${i}`, toolCalls);
    }
    console.log(`${shape}, ${toolCalls} tool calls, ${runs} runs per side per repetition:`);
    for (let rep = 0; rep < reps; rep++) {
      windows.clear();
      gcPauses.length = 0;
      const bare: number[] = [];
      const bare2: number[] = [];
      const exec: number[] = [];
      const replayBare: number[] = [];
      const replayExec: number[] = [];
      for (let i = 0; i < runs; i++) {
        // The section's alternation, with a second bare side taking the executor's turn for A/A.
        if (i % 2 === 0) {
          bare.push(await inWindow('bare', () => bareRun(agent, `b-${rep}-${i}`)));
          exec.push(await inWindow('exec', () => executorRun(executor, `e-${rep}-${i}`, toolCalls)));
          bare2.push(await bareRun(agent, `a-${rep}-${i}`));
        } else {
          bare2.push(await bareRun(agent, `a-${rep}-${i}`));
          exec.push(await inWindow('exec', () => executorRun(executor, `e-${rep}-${i}`, toolCalls)));
          bare.push(await inWindow('bare', () => bareRun(agent, `b-${rep}-${i}`)));
        }
        replayBare.push(await bareRun(replay, 'replay'));
        replayExec.push(await executorRun(replayExecutor, `r-${rep}-${i}`, toolCalls));
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
      const mapping = median(replayExec) - median(replayBare);
      const [tmBare, tmExec] = [trimmedMean(bare), trimmedMean(exec)];
      console.log(
        `  rep ${rep + 1}: bare ${tmBare.toFixed(2)} ms, executor ${tmExec.toFixed(2)} ms: overhead ${pct(tmExec, tmBare)}; ` +
          `A/A ${pct(trimmedMean(bare2), tmBare)}; mapping ${mapping.toFixed(2)} ms per run (replay ${median(replayExec).toFixed(2)} vs ${median(replayBare).toFixed(2)} ms) = ${((mapping / tmBare) * 100).toFixed(1)} % of the bare run; ` +
          `GC ${gcMsPerRun('bare').toFixed(2)} ms per bare run, ${gcMsPerRun('exec').toFixed(2)} ms per executor run`,
      );
    }
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
