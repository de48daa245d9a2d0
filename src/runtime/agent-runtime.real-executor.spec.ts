/**
 * The runtime over the real DeepAgentExecutor and LangGraph agent (offline models), where
 * agent-runtime.service.spec.ts uses a scripted fake: cancel must reach the tools' signals.
 */
import { Test, type TestingModule } from '@nestjs/testing';
import type { EventEmitter2 } from 'eventemitter2';
import { RUNTIME_EMITTER } from './runtime.constants';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { PlannerChatModel } from '../demo/planner/planner-chat-model';
import { createDemoTools } from '../demo/tools/demo-tools';
import { ExecutorModule, ScriptedChatModel } from '../executor';
import { OfflineChatModel, readCurrentTurn } from '../executor/models/offline-chat-model';
import type { ToolCallArtifactData } from '../extensions';
import { AgentBus } from './agent-bus';
import { AgentRuntimeService } from './agent-runtime.service';
import { RuntimeModule } from './runtime.module';
import type { ReplyPayload } from './runtime.topics';

/** Calls `tool_<n>` twice in parallel for a request "use <n>", then answers with the results. */
class PerRequestModel extends OfflineChatModel {
  _llmType(): string {
    return 'per-request-test';
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const turn = readCurrentTurn(messages);
    const n = Number(/use (\d+)/.exec(turn.request)?.[1]);
    if (turn.modelTurns === 0) {
      return this.result(
        new AIMessage({
          content: '',
          tool_calls: [
            { id: `r${n}_a`, name: `tool_${n}`, args: { n, part: 'a' } },
            { id: `r${n}_b`, name: `tool_${n}`, args: { n, part: 'b' } },
          ],
        }),
      );
    }
    return this.result(new AIMessage(turn.outcomes.map((o) => JSON.stringify(o.value)).join(' ')));
  }
}

async function boot(executor: ReturnType<typeof ExecutorModule.forRoot>): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({ imports: [RuntimeModule.forRoot({ executor })] }).compile();
  await moduleRef.init();
  return moduleRef;
}

function collect(bus: AgentBus, cid: string) {
  const frames: ToolCallArtifactData[] = [];
  const after: unknown[] = [];
  let settled = false;
  const subs = [
    bus.topic$('toolframe', cid).subscribe(({ frame }) => (settled ? after : frames).push(frame)),
    bus.topic$('progress', cid).subscribe((p) => settled && after.push(p)),
  ];
  const done = new Promise<ReplyPayload>((resolve) =>
    subs.push(
      bus.topic$('reply', cid).subscribe((r) => {
        settled = true;
        resolve(r);
      }),
    ),
  );
  return { frames, after, done, close: () => subs.forEach((s) => s.unsubscribe()) };
}

describe('AgentRuntimeService over the real executor', () => {
  // 200 LangGraph runs take ~6 s on a quiet machine; a loaded one (the whole suite beside a
  // benchmark) can need more than Jest's 30 s default without anything being wrong.
  it('200 concurrent runs with distinct tools: each sees only its own frames, paired, and its own answer', async () => {
    const tools = Array.from({ length: 200 }, (_, i) =>
      tool(
        async ({ part }: { n: number; part: string }) => {
          await new Promise((r) => setTimeout(r, (i * 7) % 15));
          return { owner: i, part };
        },
        { name: `tool_${i}`, description: `tool ${i}`, schema: z.object({ n: z.number(), part: z.string() }) },
      ),
    );
    const moduleRef = await boot(ExecutorModule.forRoot({ model: new PerRequestModel({}), tools }));
    const bus = moduleRef.get(AgentBus);
    const emitter = moduleRef.get<EventEmitter2>(RUNTIME_EMITTER);
    const baseline = emitter.listenerCount();
    const runs = Array.from({ length: 200 }, (_, i) => collect(bus, `task-${i}`));
    runs.forEach((_, i) => bus.publishRequest({ correlationId: `task-${i}`, message: `use ${i}` }));
    const replies = await Promise.all(runs.map((r) => r.done));
    runs.forEach((run, i) => {
      expect(replies[i]).toMatchObject({ status: 'completed' });
      expect((replies[i] as { text: string }).text).toContain(`"owner":${i}`);
      expect(run.frames).toHaveLength(4);
      for (const f of run.frames) {
        expect(f.name).toBe(`tool_${i}`);
        expect([`r${i}_a`, `r${i}_b`]).toContain(f.toolCallId);
        if (f.phase === 'completed') expect(f.result).toEqual({ owner: i, part: f.toolCallId.endsWith('a') ? 'a' : 'b' });
      }
      run.close();
    });
    expect(moduleRef.get(AgentRuntimeService).activeRuns()).toBe(0);
    expect(emitter.listenerCount()).toBe(baseline);
    await moduleRef.close();
  }, 90_000);

  it('cancel mid-run aborts the running tools, closes them as failed "cancelled", then says cancelled; nothing after', async () => {
    const aborted: string[] = [];
    const waitForever = tool(
      (_: Record<string, never>, config) =>
        new Promise((_resolve, reject) => {
          config.signal?.addEventListener('abort', () => {
            aborted.push('wait_forever');
            reject(new Error('aborted'));
          });
        }),
      { name: 'wait_forever', description: 'never returns', schema: z.object({}) },
    );
    const quick = tool(async () => 'quick result', { name: 'quick', description: 'returns', schema: z.object({}) });
    const model = new ScriptedChatModel({
      turns: [{ toolCalls: [{ name: 'wait_forever', id: 'w' }, { name: 'quick', id: 'q' }] }, { text: 'never reached' }],
    });
    const moduleRef = await boot(ExecutorModule.forRoot({ model, tools: [waitForever, quick] }));
    const bus = moduleRef.get(AgentBus);
    const run = collect(bus, 'c');
    bus.publishRequest({ correlationId: 'c', message: 'go' });
    // Cancel only once the quick tool has completed: on a loaded machine the agent's first turn can
    // take seconds, and a cancel sent before it would close 'q' as failed too. The bound only
    // keeps a broken run from waiting out the test's own timeout.
    const deadline = Date.now() + 20_000;
    while (!run.frames.some((f) => f.toolCallId === 'q' && f.phase === 'completed') && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 5));
    }
    bus.publishCancel({ correlationId: 'c', reason: 'stop pressed' });
    expect(await run.done).toEqual({ status: 'cancelled', reason: 'stop pressed' });
    expect(aborted).toEqual(['wait_forever']);
    expect(run.frames.map((f) => `${f.toolCallId}:${f.phase}`)).toEqual(['w:started', 'q:started', 'q:completed', 'w:failed']);
    expect(run.frames[3]).toMatchObject({ phase: 'failed', error: 'cancelled' });
    await new Promise((r) => setTimeout(r, 50));
    expect(run.after).toEqual([]);
    expect(moduleRef.get(AgentRuntimeService).activeRuns()).toBe(0);
    run.close();
    await moduleRef.close();
  });

  it('refuses to boot without an executor, unless it serves no requests', async () => {
    await expect(Test.createTestingModule({ imports: [RuntimeModule.forRoot({})] }).compile()).rejects.toThrow(
      'RuntimeModule: no AgentExecutor to run agents: pass executor: ExecutorModule.forRoot({ tools })',
    );
    const front = await Test.createTestingModule({ imports: [RuntimeModule.forRoot({ serveRequests: false })] }).compile();
    await front.init();
    expect(front.get(AgentRuntimeService).activeRuns()).toBe(0);
    await front.close();
  });

  it('serves the offline demo agent given as its executor', async () => {
    const executor = ExecutorModule.forRoot({ tools: createDemoTools(), model: new PlannerChatModel() });
    const moduleRef = await Test.createTestingModule({ imports: [RuntimeModule.forRoot({ executor })] }).compile();
    await moduleRef.init();
    const bus = moduleRef.get(AgentBus);
    const progress: string[] = [];
    const sub = bus.topic$('progress', 'd').subscribe((p) => progress.push(p.text));
    const run = collect(bus, 'd');
    bus.publishRequest({ correlationId: 'd', message: 'weather in Paris and the time in Tokyo' });
    expect(await run.done).toMatchObject({ status: 'completed' });
    expect(progress).toEqual(['thinking', 'checking the weather; checking the clock']);
    expect(new Set(run.frames.map((f) => f.name))).toEqual(new Set(['weather', 'world_clock']));
    sub.unsubscribe();
    run.close();
    await moduleRef.close();
  });
});
