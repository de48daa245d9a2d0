import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { firstValueFrom, last, toArray } from 'rxjs';
import { createToolAgent } from './agent/tool-agent';
import { DeepAgentExecutor } from './deep-agent-executor.service';
import { EXECUTOR_AGENT, EXECUTOR_CHAT_MODEL, EXECUTOR_TOOLS } from './executor.constants';
import { ExecutorModule } from './executor.module';
import { AgentExecutor } from './executor.types';
import { PlannerChatModel } from '../demo/planner/planner-chat-model';
import { ScriptedChatModel } from './models/scripted-chat-model';
import { OfflineToolModel } from './models/offline-tool-model';
import { createDemoTools } from '../demo/tools/demo-tools';

describe('ExecutorModule', () => {
  const saved = { ...process.env };
  beforeEach(() => {
    delete process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_BASE_URL;
  });
  afterEach(() => {
    process.env = { ...saved };
  });

  it('refuses a bare import, naming forRoot', async () => {
    await expect(Test.createTestingModule({ imports: [ExecutorModule] }).compile()).rejects.toThrow(
      'ExecutorModule must be imported as ExecutorModule.forRoot({...}) or ExecutorModule.forRootAsync({...}), not as the bare class',
    );
  });

  it('with tools, provides the default agent on the offline tool model behind AgentExecutor', async () => {
    const tools = createDemoTools();
    const moduleRef = await Test.createTestingModule({ imports: [ExecutorModule.forRoot({ tools })] }).compile();
    expect(moduleRef.get(AgentExecutor)).toBeInstanceOf(DeepAgentExecutor);
    expect(moduleRef.get(AgentExecutor)).toBe(moduleRef.get(DeepAgentExecutor));
    expect(moduleRef.get(EXECUTOR_CHAT_MODEL)).toBeInstanceOf(OfflineToolModel);
    expect(moduleRef.get(EXECUTOR_TOOLS)).toBe(tools);
  });

  it('lets an importing module inject AgentExecutor', async () => {
    @Injectable()
    class Consumer {
      constructor(readonly executor: AgentExecutor) {}
    }
    @Module({ imports: [ExecutorModule.forRoot({ tools: [] })], providers: [Consumer] })
    class ConsumerModule {}
    const moduleRef = await Test.createTestingModule({ imports: [ConsumerModule] }).compile();
    expect(moduleRef.get(Consumer).executor).toBeInstanceOf(DeepAgentExecutor);
  });

  it('takes a model and tools through forRoot', async () => {
    const model = new ScriptedChatModel({ turns: [{ text: 'scripted answer' }] });
    const moduleRef = await Test.createTestingModule({ imports: [ExecutorModule.forRoot({ model, tools: [] })] }).compile();
    expect(moduleRef.get(EXECUTOR_CHAT_MODEL)).toBe(model);
    const reply = await firstValueFrom(moduleRef.get(AgentExecutor).run('hi', { correlationId: 'c' }).pipe(last()));
    expect(reply).toMatchObject({ type: 'reply', text: 'scripted answer' });
  });

  it('takes its options from a factory through forRootAsync', async () => {
    @Module({ providers: [{ provide: 'ANSWER', useValue: 'from config' }], exports: ['ANSWER'] })
    class ConfigModule {}
    const moduleRef = await Test.createTestingModule({
      imports: [
        ExecutorModule.forRootAsync({
          imports: [ConfigModule],
          inject: ['ANSWER'],
          useFactory: async (answer: string) => ({ model: new ScriptedChatModel({ turns: [{ text: answer }] }), tools: [], runTimeoutMs: 5000 }),
        }),
      ],
    }).compile();
    const events = await firstValueFrom(moduleRef.get(AgentExecutor).run('hi', { correlationId: 'c' }).pipe(toArray()));
    expect(events[events.length - 1]).toMatchObject({ type: 'reply', text: 'from config' });
  });

  it('runs a custom agent given as agent', async () => {
    const agent = createToolAgent(new ScriptedChatModel({ turns: [{ text: 'custom' }] }), []);
    const moduleRef = await Test.createTestingModule({ imports: [ExecutorModule.forRoot({ agent })] }).compile();
    expect(moduleRef.get(EXECUTOR_AGENT)).toBe(agent);
  });

  it('lets a test replace the model behind its DI token', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [ExecutorModule.forRoot({ tools: [] })] })
      .overrideProvider(EXECUTOR_CHAT_MODEL)
      .useValue(new ScriptedChatModel({ turns: [{ text: 'overridden' }] }))
      .compile();
    const reply = await firstValueFrom(moduleRef.get(AgentExecutor).run('hi', { correlationId: 'c' }).pipe(last()));
    expect(reply).toMatchObject({ type: 'reply', text: 'overridden' });
  });

  it.each([
    [{}, 'ExecutorModule: give it tools (a list of LangChain tools) for the default agent, or an agent of your own'],
    [{ maxFieldBytes: 10 }, 'ExecutorModule: maxFieldBytes must be an integer of at least 256, got 10'],
    [{ maxFieldBytes: 1.5 }, 'ExecutorModule: maxFieldBytes must be an integer of at least 256, got 1.5'],
    [{ runTimeoutMs: 0 }, 'ExecutorModule: runTimeoutMs must be a whole number of milliseconds between 1 and 2147483647, got 0'],
    [{ toolTimeoutMs: -5 }, 'ExecutorModule: toolTimeoutMs must be a whole number of milliseconds between 1 and 2147483647, got -5'],
    [{ maxSteps: 1 }, 'ExecutorModule: maxSteps must be an integer of at least 2, got 1'],
    [{ redactKeys: ['ok', ''] }, 'ExecutorModule: redactKeys must be a list of non-empty strings'],
    [{ agent: {} }, 'ExecutorModule: agent must be a compiled LangGraph graph (it has no stream() method)'],
    [
      { agent: createToolAgent(new PlannerChatModel(), []), toolTimeoutMs: 100 },
      'ExecutorModule: agent replaces the default agent, so toolTimeoutMs would be ignored',
    ],
  ])('refuses bad options %j at startup with a clear error', async (options, message) => {
    await expect(Test.createTestingModule({ imports: [ExecutorModule.forRoot(options as never)] }).compile()).rejects.toThrow(message);
  });
});
