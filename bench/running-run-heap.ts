/**
 * `node --expose-gc -r ts-node/register/transpile-only bench/running-run-heap.ts [runs=200] [--executor=langgraph|bench] [--dir=<dir>]`
 *
 * What one RUNNING run holds in the runtime and its executor, in process (no HTTP, no task
 * store): the RuntimeModule over the real DeepAgentExecutor (LangGraph's agent, a scripted
 * model whose first turn calls one tool that waits until released) or over the bench's scripted
 * executor (bench/servers/bench-agent-executor.ts, an idle scenario). A heap snapshot after a
 * warm-up of completed runs, then one while `runs` runs wait in their tool call (each has
 * published its `started` frame), diffed by bench/lib/heap-snapshot.ts per run. The bench's
 * servers run the bench executor, so this is what a production server holds per run beyond
 * what bench/running-task-heap.ts measures.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { Test } from '@nestjs/testing';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { ExecutorModule, ScriptedChatModel } from '../src/executor';
import { AgentExecutor } from '../src/executor';
import { AgentBus, RuntimeModule } from '../src/runtime';
import { BenchAgentExecutor } from './servers/bench-agent-executor';
import { reportGrowth } from './lib/heap-snapshot';
import { scenarioText } from './lib/scenario';

function option(args: string[], name: string, fallback: string): string {
  return args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const [runs = 200] = args.filter((a) => !a.startsWith('--')).map(Number);
  const kind = option(args, 'executor', 'langgraph');
  const dir = option(args, 'dir', join(__dirname, '.work', 'running-run-heap'));
  mkdirSync(dir, { recursive: true });
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  let release: () => void = () => undefined;
  let released = Promise.resolve();
  const hold = (): void => {
    released = new Promise<void>((resolve) => (release = resolve));
  };
  const wait = tool(async () => (await released, 'released'), { name: 'wait', description: 'waits until released', schema: z.object({}) });
  const model = new ScriptedChatModel({ turns: [{ toolCalls: [{ name: 'wait', id: 'w' }] }, { text: 'done' }] });
  let builder = Test.createTestingModule({ imports: [RuntimeModule.forRoot({ executor: ExecutorModule.forRoot({ model, tools: [wait] }) })] });
  if (kind === 'bench') builder = builder.overrideProvider(AgentExecutor).useClass(BenchAgentExecutor);
  const moduleRef = await builder.compile();
  await moduleRef.init();
  const bus = moduleRef.get(AgentBus);
  const message = kind === 'bench' ? scenarioText({ toolCalls: 1, intervalMs: 0, idle: true }) : 'go';
  let started = 0;
  let replies = 0;
  let n = 0;
  /** Runs `count` runs to their tool call, then (once `between` has run) lets them end. */
  const batch = async (count: number, between: () => void): Promise<void> => {
    hold();
    started = 0;
    replies = 0;
    const stops: (() => void)[] = [];
    for (let i = 0; i < count; i++) {
      const id = `run-${n++}`;
      stops.push(
        bus.listenTask(id, {
          progress: () => undefined,
          toolframe: (payload) => {
            if ((payload as { frame: { phase: string } }).frame.phase === 'started') started++;
          },
          answer: () => undefined,
          reply: () => void replies++,
        }),
      );
      bus.publishRequest({ correlationId: id, message });
    }
    while (started < count) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 100));
    between();
    release();
    // The bench executor's idle runs wait for their abort: cancel them.
    if (kind === 'bench') for (let i = n - count; i < n; i++) bus.publishCancel({ correlationId: `run-${i}`, reason: 'done' });
    while (replies < count) await new Promise((r) => setTimeout(r, 10));
    for (const stop of stops) stop();
  };
  await batch(50, () => undefined);
  await batch(50, () => undefined);
  gc();
  const before = writeHeapSnapshot(join(dir, `${kind}-before.heapsnapshot`));
  let during = '';
  await batch(runs, () => {
    gc();
    during = writeHeapSnapshot(join(dir, `${kind}-${runs}-running.heapsnapshot`));
  });
  await moduleRef.close();
  reportGrowth(before, during, runs, `${kind} executor, ${runs} running runs`);
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
