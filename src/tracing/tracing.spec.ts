import { context, propagation, trace, SpanStatusCode, ROOT_CONTEXT } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { Observable } from 'rxjs';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { withToolSpan } from '../executor/agent/tool-spans';
import { createToolAgent } from '../executor/agent/tool-agent';
import { AgentExecutor, DeepAgentExecutor, ScriptedChatModel, type ExecutorEvent } from '../executor';
import { AgentRuntimeService, type AgentBus, type SkillRequest } from '../runtime';
import { fetchWithHeaders } from '../remote-agents/remote-agent-client';
import { activeTaskId, contextFromCarrier, injectTraceHeaders, toolstreamTracer, traceCarrier, withTaskId } from './trace-context';
import { A2A_TASK_ID, GEN_AI, GEN_AI_OPERATION } from './gen-ai';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
});

afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  propagation.disable();
  context.disable();
});

beforeEach(() => exporter.reset());

describe('trace context as plain JSON', () => {
  it('round-trips through a carrier: the continued context names the same trace and parent span', () => {
    const span = toolstreamTracer().startSpan('task');
    const carrier = traceCarrier(trace.setSpan(ROOT_CONTEXT, span));
    expect(carrier).toEqual({ traceparent: `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01` });
    const continued = trace.getSpanContext(contextFromCarrier(JSON.parse(JSON.stringify(carrier))));
    expect(continued).toMatchObject({ traceId: span.spanContext().traceId, spanId: span.spanContext().spanId, isRemote: true });
    span.end();
  });

  it('has nothing to carry without a span, and ignores carriers that are not small objects of strings', () => {
    expect(traceCarrier(ROOT_CONTEXT)).toBeUndefined();
    for (const bad of [undefined, null, 'traceparent', 42, [], { traceparent: 42 }, { traceparent: 'x'.repeat(5000) }, Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'v']))]) {
      expect(trace.getSpanContext(contextFromCarrier(bad))).toBeUndefined();
    }
    expect(trace.getSpanContext(contextFromCarrier({ traceparent: 'not-a-traceparent' }))).toBeUndefined();
  });

  it('injects traceparent into outgoing headers, as a Headers object or a plain record', () => {
    const span = toolstreamTracer().startSpan('tool');
    const ctx = trace.setSpan(ROOT_CONTEXT, span);
    const headers = context.with(ctx, () => injectTraceHeaders(new Headers({ 'content-type': 'application/json' })));
    expect(headers.get('traceparent')).toBe(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);
    expect(injectTraceHeaders({ a: 'b' }, ctx)).toEqual({ a: 'b', traceparent: headers.get('traceparent') });
    expect(injectTraceHeaders({}, ROOT_CONTEXT)).toEqual({});
    span.end();
  });

  it('keeps the task id of a run in the context', () => {
    expect(activeTaskId(withTaskId(ROOT_CONTEXT, 't-1'))).toBe('t-1');
    expect(activeTaskId(ROOT_CONTEXT)).toBeUndefined();
  });
});

describe('execute_tool spans', () => {
  const weather = tool(async ({ city }: { city: string }) => ({ city, tempC: 18 }), {
    name: 'weather',
    description: 'weather',
    schema: z.object({ city: z.string() }),
  });
  const broken = tool(
    async () => {
      throw new Error('no such city');
    },
    { name: 'broken', description: 'fails', schema: z.object({}) },
  );

  it('one span per call, under the active span, with the GenAI attributes and the task id; the body runs inside it', async () => {
    let innerSpanId: string | undefined;
    const spy = tool(
      async () => {
        innerSpanId = trace.getSpan(context.active())?.spanContext().spanId;
        return 'ok';
      },
      { name: 'spy', description: 'spy', schema: z.object({}) },
    );
    const parent = toolstreamTracer().startSpan('invoke_agent test');
    const ctx = withTaskId(trace.setSpan(ROOT_CONTEXT, parent), 'task-9');
    await context.with(ctx, () => withToolSpan(weather).invoke({ type: 'tool_call', id: 'call_7', name: 'weather', args: { city: 'Paris' } }));
    await context.with(ctx, () => withToolSpan(spy).invoke({ type: 'tool_call', id: 'call_8', name: 'spy', args: {} }));
    parent.end();
    const [span, spySpan] = exporter.getFinishedSpans().filter((s) => s.name.startsWith('execute_tool'));
    expect(span.name).toBe('execute_tool weather');
    expect(span.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(span.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'weather',
      'gen_ai.tool.type': 'function',
      'gen_ai.tool.call.id': 'call_7',
      'a2a.task.id': 'task-9',
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(innerSpanId).toBe(spySpan.spanContext().spanId);
  });

  it('error status with the tool message when the tool throws, and when its arguments do not fit its schema', async () => {
    await expect(withToolSpan(broken).invoke({ type: 'tool_call', id: 'c1', name: 'broken', args: {} })).rejects.toThrow('no such city');
    await expect(withToolSpan(weather).invoke({ type: 'tool_call', id: 'c2', name: 'weather', args: { city: 3 } })).rejects.toThrow();
    const [thrown, badArgs] = exporter.getFinishedSpans();
    expect(thrown.status).toEqual({ code: SpanStatusCode.ERROR, message: 'no such city' });
    expect(thrown.attributes['error.type']).toBe('Error');
    expect(thrown.events.map((e) => e.name)).toEqual(['exception']);
    expect(badArgs.status.code).toBe(SpanStatusCode.ERROR);
    expect(badArgs.status.message).toMatch(/did not match expected schema/);
  });

  it('the traced tool is the same tool: name, schema, result', async () => {
    const traced = withToolSpan(weather);
    expect(traced.name).toBe('weather');
    expect(traced.schema).toBe(weather.schema);
    await expect(traced.invoke({ city: 'Oslo' })).resolves.toEqual({ city: 'Oslo', tempC: 18 });
  });
});

describe('the runtime continues the trace carried by the request', () => {
  it('runs the executor inside the context of the request carrier, whatever context publishes it', async () => {
    const seen: (string | undefined)[] = [];
    class SpanningExecutor extends AgentExecutor {
      run(): Observable<ExecutorEvent> {
        return new Observable<ExecutorEvent>((sub) => {
          const span = toolstreamTracer().startSpan('inside the run');
          seen.push(span.spanContext().traceId);
          span.end();
          sub.next({ type: 'error', error: 'done' });
          sub.complete();
        });
      }
    }
    const published: unknown[] = [];
    const bus = { publish: (_kind: string, _id: string, payload: unknown) => published.push(payload) } as unknown as AgentBus;
    const runtime = new AgentRuntimeService(bus, { narrate: () => '' } as never, { serveRequests: false }, new SpanningExecutor());
    const task = toolstreamTracer().startSpan('invoke_agent test');
    const request: SkillRequest = { correlationId: 'c-1', message: 'hi', trace: traceCarrier(trace.setSpan(ROOT_CONTEXT, task)) };
    const unrelated = toolstreamTracer().startSpan('unrelated');
    context.with(trace.setSpan(ROOT_CONTEXT, unrelated), () => runtime.start(JSON.parse(JSON.stringify(request)) as SkillRequest));
    task.end();
    unrelated.end();
    const inner = exporter.getFinishedSpans().find((s) => s.name === 'inside the run');
    expect(inner?.spanContext().traceId).toBe(task.spanContext().traceId);
    expect(inner?.parentSpanContext?.spanId).toBe(task.spanContext().spanId);
    expect(seen).toHaveLength(1);
    expect(published).toEqual([{ status: 'failed', error: 'done' }]);
  });
});

describe('execute_tool spans for any agent, made from the run\'s frames', () => {
  const weather = tool(async ({ city }: { city: string }) => ({ city, tempC: 18 }), { name: 'weather', description: 'weather', schema: z.object({ city: z.string() }) });
  const broken = tool(
    async (): Promise<string> => {
      throw new Error('no such city');
    },
    { name: 'broken', description: 'fails', schema: z.object({}) },
  );
  const turns = [{ toolCalls: [{ name: 'weather', args: { city: 'Paris' }, id: 'w1' }, { name: 'broken', args: {}, id: 'b1' }] }, { text: 'done' }];

  /** Runs one request through the runtime under a task span; resolves once the reply is published. */
  async function runTraced(
    executor: AgentExecutor,
    traced = true,
  ): Promise<{ task: { traceId: string; spanId: string }; tools: ReturnType<typeof exporter.getFinishedSpans>; models: ReturnType<typeof exporter.getFinishedSpans> }> {
    let replied!: () => void;
    const done = new Promise<void>((resolve) => (replied = resolve));
    const bus = { publish: (kind: string) => kind === 'reply' && replied() } as unknown as AgentBus;
    const runtime = new AgentRuntimeService(bus, { narrate: () => '' } as never, { serveRequests: false }, executor);
    const task = toolstreamTracer().startSpan('invoke_agent test');
    runtime.start({ correlationId: 'task-3', message: 'go', trace: traced ? traceCarrier(trace.setSpan(ROOT_CONTEXT, task)) : undefined });
    await done;
    task.end();
    const spans = exporter.getFinishedSpans();
    return { task: task.spanContext(), tools: spans.filter((s) => s.name.startsWith('execute_tool')), models: spans.filter((s) => s.name.startsWith('chat ')) };
  }

  /** A LangGraph agent of one's own (not createToolAgent): a model node and a ToolNode. */
  function customAgent() {
    const model = new ScriptedChatModel({ turns });
    return new StateGraph(MessagesAnnotation)
      .addNode('agent', async (state: typeof MessagesAnnotation.State) => ({ messages: [await model.bindTools([weather, broken]).invoke(state.messages)] }))
      .addNode('tools', new ToolNode([weather, broken]))
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', toolsCondition, ['tools', END])
      .addEdge('tools', 'agent')
      .compile();
  }

  const summary = (spans: ReturnType<typeof exporter.getFinishedSpans>) =>
    spans.map((s) => ({ name: s.name, id: s.attributes['gen_ai.tool.call.id'], task: s.attributes['a2a.task.id'], status: s.status, parent: s.parentSpanContext?.spanId })).sort((a, b) => a.name.localeCompare(b.name));

  it('a custom LangGraph agent (not the default one) gets one span per tool call and per model call under the task span, error status on a failure', async () => {
    const custom = customAgent();
    const executor = new DeepAgentExecutor(custom, { agent: custom });
    expect(executor.tracesToolCalls).toBe(false);
    const { task, tools, models } = await runTraced(executor);
    // Two model turns: the one that calls the tools, the one that answers.
    expect(models.map((m) => ({ name: m.name, op: m.attributes['gen_ai.operation.name'], task: m.attributes['a2a.task.id'], parent: m.parentSpanContext?.spanId }))).toEqual([
      { name: 'chat ScriptedChatModel', op: 'chat', task: 'task-3', parent: task.spanId },
      { name: 'chat ScriptedChatModel', op: 'chat', task: 'task-3', parent: task.spanId },
    ]);
    expect(summary(tools)).toEqual([
      { name: 'execute_tool broken', id: 'b1', task: 'task-3', status: { code: SpanStatusCode.ERROR, message: expect.stringContaining('no such city') }, parent: task.spanId },
      { name: 'execute_tool weather', id: 'w1', task: 'task-3', status: { code: SpanStatusCode.UNSET }, parent: task.spanId },
    ]);
    expect(tools.every((s) => s.spanContext().traceId === task.traceId && s.attributes['gen_ai.operation.name'] === 'execute_tool')).toBe(true);
  });

  it('a run outside any trace gets no spans from its frames or callbacks', async () => {
    const custom = customAgent();
    const { tools, models } = await runTraced(new DeepAgentExecutor(custom, { agent: custom }), false);
    expect([...tools, ...models]).toEqual([]);
  });

  it('the default agent traces its own calls: still one span per call, not two', async () => {
    const executor = new DeepAgentExecutor(createToolAgent(new ScriptedChatModel({ turns }), [weather, broken]), { tools: [weather, broken] });
    expect(executor.tracesToolCalls).toBe(true);
    const { task, tools, models } = await runTraced(executor);
    expect(models).toHaveLength(2);
    expect(summary(tools).map(({ name, id, parent }) => ({ name, id, parent }))).toEqual([
      { name: 'execute_tool broken', id: 'b1', parent: task.spanId },
      { name: 'execute_tool weather', id: 'w1', parent: task.spanId },
    ]);
  });

  it('an executor of a backend\'s own: spans from its frames; forwarded frames get none; a tool the run left open ends with the run, in error', async () => {
    class FramesOnly extends AgentExecutor {
      run(): Observable<ExecutorEvent> {
        return new Observable<ExecutorEvent>((sub) => {
          const at = new Date().toISOString();
          sub.next({ type: 'toolFrame', frame: { toolCallId: 'a', name: 'lookup', phase: 'started', args: {}, timestamp: at } });
          sub.next({ type: 'toolFrame', frame: { toolCallId: 'a/x', name: 'remote_step', phase: 'started', args: {}, timestamp: at, parentToolCallId: 'a' } });
          sub.next({ type: 'toolFrame', frame: { toolCallId: 'a/x', name: 'remote_step', phase: 'completed', result: 1, timestamp: at, parentToolCallId: 'a' } });
          sub.next({ type: 'toolFrame', frame: { toolCallId: 'a', name: 'lookup', phase: 'completed', result: 2, timestamp: at } });
          sub.next({ type: 'toolFrame', frame: { toolCallId: 'h', name: 'hung', phase: 'started', args: {}, timestamp: at } });
          sub.next({ type: 'error', error: 'gave up' });
          sub.complete();
        });
      }
    }
    const { tools } = await runTraced(new FramesOnly());
    expect(summary(tools).map(({ name, status }) => ({ name, status }))).toEqual([
      { name: 'execute_tool hung', status: { code: SpanStatusCode.ERROR, message: 'the run ended before the tool did' } },
      { name: 'execute_tool lookup', status: { code: SpanStatusCode.UNSET } },
    ]);
    // The same GenAI attributes as the spans of the agent's own tools.
    expect(tools.find((s) => s.name === 'execute_tool lookup')?.attributes).toEqual({
      [GEN_AI.operationName]: GEN_AI_OPERATION.executeTool,
      [GEN_AI.toolName]: 'lookup',
      [GEN_AI.toolType]: 'function',
      [GEN_AI.toolCallId]: 'a',
      [A2A_TASK_ID]: 'task-3',
    });
  });
});

describe('requests to remote agents', () => {
  it('carry the active span as traceparent, beside the configured headers and the call’s own', async () => {
    const sent: Headers[] = [];
    const fake = (async (_input: unknown, init?: RequestInit) => {
      sent.push(new Headers(init?.headers));
      return new Response('{}');
    }) as typeof fetch;
    const remoteFetch = fetchWithHeaders({ 'X-API-Key': 'k' }, fake);
    const span = toolstreamTracer().startSpan('execute_tool remote');
    await context.with(trace.setSpan(ROOT_CONTEXT, span), () => remoteFetch('http://agent.example/a2a', { headers: { 'content-type': 'application/json' } }));
    await remoteFetch('http://agent.example/a2a');
    span.end();
    const first: Record<string, string> = {};
    sent[0].forEach((value, key) => (first[key] = value));
    expect(first).toEqual({
      'x-api-key': 'k',
      'content-type': 'application/json',
      traceparent: `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`,
    });
    expect(sent[1].has('traceparent')).toBe(false);
  });
});
