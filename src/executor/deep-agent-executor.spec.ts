import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool, type StructuredToolInterface } from '@langchain/core/tools';
import { END, interrupt, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { Test } from '@nestjs/testing';
import { z } from 'zod';
import { createToolAgent } from './agent/tool-agent';
import { CANCELLED } from './agent-run';
import { DeepAgentExecutor } from './deep-agent-executor.service';
import { ExecutorModule } from './executor.module';
import type { ExecutorModuleOptions } from './executor-module-options';
import { AgentExecutor, type ExecutorEvent } from './executor.types';
import { eventually, expectWellFormed, frameAt, framesOf, record, runToEnd, type Recorded } from './fixtures/run-recorder';
import { ScriptedChatModel, type ScriptedTurn } from './models/scripted-chat-model';
import { sleep } from './abortable';
import { PlannerChatModel } from '../demo/planner/planner-chat-model';
import { createDemoTools } from '../demo/tools/demo-tools';

const demoExecutor = () => ExecutorModule.forRoot({ tools: createDemoTools(), model: new PlannerChatModel() });

/** A tool that waits `ms` (honouring its signal) and remembers whether it was aborted. */
function sleepyTool(name = 'sleepy') {
  const aborted: string[] = [];
  const t = tool(
    async ({ ms }, config) => {
      const signal = config.signal;
      const onAbort = (): number => aborted.push(`${name}:${ms}`);
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        await sleep(ms, signal);
        return { slept: ms };
      } finally {
        signal?.removeEventListener('abort', onAbort);
      }
    },
    { name, description: 'sleeps', schema: z.object({ ms: z.number() }) },
  );
  return { tool: t, aborted };
}

const thrower = tool(
  async (): Promise<string> => {
    throw new Error('the database is on fire');
  },
  { name: 'thrower', description: 'throws', schema: z.object({}) },
);
const syncThrower = tool(
  (): string => {
    throw new TypeError('thrown synchronously');
  },
  { name: 'sync_thrower', description: 'throws at once', schema: z.object({}) },
);
/** Never settles and ignores its signal, like a stuck socket. */
const hanging = tool(() => new Promise<string>(() => undefined), { name: 'hanging', description: 'hangs', schema: z.object({}) });

/** A graph that records each run's signal: its first run ends at once, later ones wait 5 s (honouring the signal) before the answer. */
function signalRecordingAgent() {
  const signals: AbortSignal[] = [];
  const agent = {
    stream: (_input: unknown, options: { signal: AbortSignal }) => {
      signals.push(options.signal);
      const wait = signals.length === 1 ? 0 : 5_000;
      return Promise.resolve(
        (async function* () {
          yield ['values', { messages: [new HumanMessage('go')] }];
          await sleep(wait, options.signal);
          yield ['values', { messages: [new HumanMessage('go'), new AIMessage('done')] }];
        })(),
      );
    },
  };
  return { agent, signals };
}

async function executorWith(options: ExecutorModuleOptions): Promise<AgentExecutor> {
  const moduleRef = await Test.createTestingModule({ imports: [ExecutorModule.forRoot(options)] }).compile();
  return moduleRef.get(AgentExecutor);
}

const scripted = (turns: ScriptedTurn[], tools: StructuredToolInterface[], extra: Partial<ExecutorModuleOptions> = {}) =>
  executorWith({ model: new ScriptedChatModel({ turns }), tools, ...extra });

const types = (events: Array<{ event: ExecutorEvent }>): string[] =>
  events.map(({ event }) => (event.type === 'toolFrame' ? `${event.frame.phase}:${event.frame.toolCallId}` : event.type));

describe('DeepAgentExecutor (through ExecutorModule)', () => {
  describe('the offline demo agent', () => {
    const saved = { ...process.env };
    beforeEach(() => {
      delete process.env.OPENAI_API_KEY;
      delete process.env.OPENAI_BASE_URL;
    });
    afterEach(() => {
      process.env = { ...saved };
    });

    it('runs "weather in Paris and the time in Tokyo" as two parallel tools and answers from them', async () => {
      const moduleRef = await Test.createTestingModule({ imports: [demoExecutor()] }).compile();
      const executor = moduleRef.get(AgentExecutor);
      expect(executor).toBe(moduleRef.get(DeepAgentExecutor));

      const events = await runToEnd(executor.run('weather in Paris and the time in Tokyo', { correlationId: 'task-1' }));
      expectWellFormed(events);
      const list = events.map((e) => e.event);
      expect(list[1]).toMatchObject({
        type: 'progress',
        step: 1,
        text: 'running weather; running world_clock',
        tools: [
          { name: 'weather', args: { city: 'Paris' } },
          { name: 'world_clock', args: { place: 'Tokyo' } },
        ],
      });
      const frames = framesOf(events);
      expect(frames.map((f) => `${f.phase}:${f.name}`).slice(0, 2)).toEqual(['started:weather', 'started:world_clock']);
      expect(frames.filter((f) => f.phase === 'completed').map((f) => f.name).sort()).toEqual(['weather', 'world_clock']);
      const weather = frames.find((f) => f.phase === 'completed' && f.name === 'weather');
      expect(weather).toMatchObject({ result: { city: 'Paris', temperatureC: 18, condition: 'partly cloudy' } });
      const reply = list[list.length - 1];
      expect(reply.type).toBe('reply');
      expect(reply.type === 'reply' && reply.text).toMatch(/^Paris: partly cloudy, 18 °C .* In Tokyo it is \d\d:\d\d /);
    });

    it('keeps concurrent runs apart', async () => {
      const moduleRef = await Test.createTestingModule({ imports: [demoExecutor()] }).compile();
      const executor = moduleRef.get(AgentExecutor);
      const cities = ['Paris', 'London', 'Tokyo', 'Berlin', 'Madrid', 'Rome', 'Sydney', 'Cairo'];
      const runs = await Promise.all(
        cities.map((city, i) => runToEnd(executor.run(`weather in ${city} and take a slow step of ${10 * (8 - i)} ms`, { correlationId: `run-${i}` }))),
      );
      runs.forEach((events, i) => {
        expectWellFormed(events);
        expect(framesOf(events).filter((f) => f.phase === 'completed' && f.name === 'weather').map((f) => (f.result as { city: string }).city)).toEqual([cities[i]]);
        const last = events[events.length - 1].event;
        expect(last.type === 'reply' && last.text).toMatch(new RegExp(`^${cities[i]}: `));
      });
    });

    it('answers from a failure too', async () => {
      const moduleRef = await Test.createTestingModule({ imports: [demoExecutor()] }).compile();
      const events = await runToEnd(moduleRef.get(AgentExecutor).run('read the doc missing-page', { correlationId: 't' }));
      expectWellFormed(events);
      expect(framesOf(events)[1]).toMatchObject({ phase: 'failed', error: expect.stringMatching(/^no document named "missing-page"/) });
      const last = events[events.length - 1].event;
      expect(last.type === 'reply' && last.text).toMatch(/^I could not read the doc "missing-page": no document named "missing-page"/);
    });
  });

  it('emits "thinking" synchronously at subscribe, before the first model turn', async () => {
    const executor = await scripted([{ text: 'hello', delayMs: 50 }], []);
    const rec = record(executor.run('hi', { correlationId: 't' }));
    expect(rec.events.map((e) => e.event)).toEqual([{ type: 'progress', text: 'thinking', step: 0 }]);
    await rec.done;
    expect(types(rec.events)).toEqual(['progress', 'answer', 'answer', 'reply']);
    expect(rec.events[3].event).toMatchObject({ type: 'reply', text: 'hello' });
  });

  it('is cold: nothing runs until subscribe', async () => {
    const model = new ScriptedChatModel({ turns: [{ text: 'x' }] });
    const generate = jest.spyOn(model, '_generate');
    const executor = await executorWith({ model, tools: [] });
    const run$ = executor.run('hi', { correlationId: 't' });
    await sleep(30);
    expect(generate).not.toHaveBeenCalled();
    await runToEnd(run$);
    expect(generate).toHaveBeenCalledTimes(1);
  });

  it('reports parallel tools live: the 50 ms tool completes at least 300 ms before the 500 ms one', async () => {
    const { tool: sleepy } = sleepyTool();
    const executor = await scripted(
      [{ toolCalls: [{ name: 'sleepy', args: { ms: 500 }, id: 'slow' }, { name: 'sleepy', args: { ms: 50 }, id: 'fast' }] }, { text: 'done' }],
      [sleepy],
    );
    const events = await runToEnd(executor.run('go', { correlationId: 't' }));
    expectWellFormed(events);
    expect(types(events)).toEqual(['progress', 'progress', 'started:slow', 'started:fast', 'completed:fast', 'completed:slow', 'answer', 'answer', 'reply']);
    expect(frameAt(events, 'slow', 'completed').at - frameAt(events, 'fast', 'completed').at).toBeGreaterThanOrEqual(300);
    const stamps = framesOf(events).map((f) => Date.parse(f.timestamp ?? ''));
    expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
  });

  it('pairs every terminal frame with its started frame when the model gives no ids', async () => {
    const { tool: sleepy } = sleepyTool();
    const model = new ScriptedChatModel({
      omitIds: true,
      turns: [
        {
          toolCalls: [
            // Ends 50 ms or more apart: with 20 ms between two of them, a loaded machine once
            // started the later one's timer late enough to swap their ends.
            { name: 'sleepy', args: { ms: 240 } },
            { name: 'sleepy', args: { ms: 10 }, id: '' },
            { name: 'sleepy', args: { ms: 120 }, id: 'dup' },
            { name: 'sleepy', args: { ms: 60 }, id: 'dup' },
            { name: 'thrower' },
          ],
        },
        { text: 'done' },
      ],
    });
    const executor = await executorWith({ model, tools: [sleepy, thrower] });
    const events = await runToEnd(executor.run('go', { correlationId: 't' }));
    expectWellFormed(events);
    const frames = framesOf(events);
    const started = frames.filter((f) => f.phase === 'started');
    const ids = started.map((f) => f.toolCallId);
    expect(ids.every((id) => id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(5);
    // Live order proves the ids were on the calls before they ran: each end is reported as it happens.
    const ends = frames.filter((f) => f.phase !== 'started');
    const argsOf = (id: string): unknown => started.find((f) => f.toolCallId === id && f.phase === 'started')?.args;
    expect(ends.map((f) => (f.name === 'thrower' ? 'thrower' : (argsOf(f.toolCallId) as { ms: number }).ms))).toEqual(['thrower', 10, 60, 120, 240]);
  });

  // LangGraph's ToolNode skips a call whose id already has a result in the state, so without
  // fresh ids the later calls would never run (and never get frames).
  describe('a model that reuses a tool-call id in a later turn (call_0 every turn)', () => {
    const reusing = (): ScriptedTurn[] => [
      { toolCalls: [{ name: 'sleepy', args: { ms: 5 }, id: 'call_0' }] },
      { toolCalls: [{ name: 'sleepy', args: { ms: 6 }, id: 'call_0' }, { name: 'sleepy', args: { ms: 7 }, id: 'call_1' }] },
      { toolCalls: [{ name: 'sleepy', args: { ms: 8 }, id: 'call_0' }] },
      { text: 'done' },
    ];
    const msOf = (events: Recorded[]) => framesOf(events).map((f) => `${f.phase}:${(f.args as { ms?: number } | undefined)?.ms ?? '-'}`);

    it('gets frames for every call from the default agent, which gives the reused ids fresh ones', async () => {
      const { tool: sleepy } = sleepyTool();
      const executor = await scripted(reusing(), [sleepy]);
      const events = await runToEnd(executor.run('go', { correlationId: 't' }));
      expectWellFormed(events);
      const started = framesOf(events).filter((f) => f.phase === 'started');
      expect(started.map((f) => (f.args as { ms: number }).ms)).toEqual([5, 6, 7, 8]);
      expect(new Set(started.map((f) => f.toolCallId)).size).toBe(4);
      expect(started[0].toolCallId).toBe('call_0');
      expect(framesOf(events).filter((f) => f.phase === 'completed')).toHaveLength(4);
      expect(msOf(events)).toEqual(['started:5', 'completed:-', 'started:6', 'started:7', 'completed:-', 'completed:-', 'started:8', 'completed:-']);
      expect(events.at(-1)?.event).toMatchObject({ type: 'reply', text: 'done' });
    });
  });

  describe('the streamed answer', () => {
    const answers = (events: Recorded[]) =>
      events.flatMap(({ event, at }) => (event.type === 'answer' ? [{ ...event, at }] : []));

    it('reaches the stream while the model writes it, in pieces that add up to its text exactly', async () => {
      const chunks = ['The weather ', 'in Paris ', 'is mild, ', 'with a light ', 'breeze — 18 °C.'];
      const executor = await scripted([{ text: chunks.join(''), chunks, chunkDelayMs: 200 }], []);
      const events = await runToEnd(executor.run('go', { correlationId: 't' }));
      expectWellFormed(events);
      const pieces = answers(events);
      expect(pieces[0]).toMatchObject({ text: 'The weather ', append: false, last: false });
      expect(pieces.slice(1).every((p) => p.append)).toBe(true);
      expect(pieces.filter((p) => p.last)).toEqual([pieces[pieces.length - 1]]);
      expect(pieces.map((p) => p.text).join('')).toBe(chunks.join(''));
      // Live: the first piece left at least four chunk delays before the model finished.
      const reply = events[events.length - 1];
      expect(reply.event).toMatchObject({ type: 'reply', text: chunks.join('') });
      expect(reply.at - pieces[0].at).toBeGreaterThanOrEqual(600);
      expect(pieces.length).toBeGreaterThanOrEqual(3);
    });

    it('sends one piece per token without coalescing, and far fewer with it', async () => {
      const tokens = Array.from({ length: 300 }, (_, i) => `tok${i} `);
      const turns: ScriptedTurn[] = [{ text: tokens.join(''), chunks: tokens }];
      const each = answers(await runToEnd((await scripted(turns, [], { answerChunking: { flushMs: 0, flushChars: 0 } })).run('go', { correlationId: 't' })));
      expect(each.map((p) => p.text)).toEqual([...tokens, '']);
      const coalesced = answers(await runToEnd((await scripted(turns, [])).run('go', { correlationId: 't' })));
      expect(coalesced.map((p) => p.text).join('')).toBe(tokens.join(''));
      // 300 tokens of ~7 characters in 64-character pieces (or fewer, when the timer is late).
      expect(coalesced.length).toBeLessThanOrEqual(Math.ceil(tokens.join('').length / 64) + 2);
    });

    it('treats text written before tool calls as narration: withdrawn from the answer, given as the turn\'s words', async () => {
      const { tool: sleepy } = sleepyTool();
      const executor = await scripted(
        [{ text: 'Let me check that for you.', toolCalls: [{ name: 'sleepy', args: { ms: 5 }, id: 's' }] }, { text: 'All done.' }],
        [sleepy],
      );
      const events = await runToEnd(executor.run('go', { correlationId: 't' }));
      expectWellFormed(events);
      const step1 = events.map((e) => e.event).find((e) => e.type === 'progress' && e.step === 1);
      expect(step1).toMatchObject({ said: 'Let me check that for you.', text: 'running sleepy' });
      const pieces = answers(events);
      // Whatever of the narration went out is withdrawn by an empty append:false before the tool starts.
      const started = frameAt(events, 's', 'started').at;
      const before = pieces.filter((p) => p.at <= started);
      if (before.length > 0) expect(before[before.length - 1]).toMatchObject({ text: '', append: false });
      const after = pieces.filter((p) => p.at > started);
      expect(after[0]).toMatchObject({ append: false });
      expect(after.map((p) => p.text).join('')).toBe('All done.');
      expect(after[after.length - 1].last).toBe(true);
    });

    it('keeps what was written when the run fails, without a last piece', async () => {
      const chunks = ['half ', 'an ', 'answer ', 'and ', 'then ', 'nothing'];
      const executor = await scripted([{ text: chunks.join(''), chunks, chunkDelayMs: 300 }], [], { runTimeoutMs: 700 });
      const events = await runToEnd(executor.run('go', { correlationId: 't' }));
      expectWellFormed(events);
      expect(events[events.length - 1].event).toEqual({ type: 'error', error: 'run timed out after 700 ms' });
      const written = answers(events);
      expect(written.length).toBeGreaterThan(0);
      expect(written.some((p) => p.last)).toBe(false);
      const text = written.map((p) => p.text).join('');
      expect(text.length).toBeGreaterThan(0);
      expect(chunks.join('').startsWith(text)).toBe(true);
      expect(text).not.toBe(chunks.join(''));
    });
  });

  it('reports a thrown tool with its own message, and the run goes on', async () => {
    const executor = await scripted(
      [{ toolCalls: [{ name: 'thrower', id: 'a' }, { name: 'sync_thrower', id: 'b' }, { name: 'sync_thrower', id: 'c', args: { unexpected: 1, nested: 'no' } }] }, { text: 'sorry' }],
      [thrower, syncThrower],
    );
    const events = await runToEnd(executor.run('go', { correlationId: 't' }));
    expectWellFormed(events);
    expect(frameAt(events, 'a', 'failed')).toMatchObject({ error: 'the database is on fire' });
    expect(frameAt(events, 'b', 'failed')).toMatchObject({ error: 'thrown synchronously' });
    expect(framesOf(events).every((f) => f.phase !== 'failed' || !/Please fix/.test(f.error ?? ''))).toBe(true);
    expect(events[events.length - 1].event).toMatchObject({ type: 'reply', text: 'sorry' });
  });

  it('runs long tool loops (60 tool-calling turns) within maxSteps, and ends with an error event past it', async () => {
    const echo = tool(async ({ n }: { n: number }) => n, { name: 'echo', description: 'echoes', schema: z.object({ n: z.number() }) });
    const turns: ScriptedTurn[] = Array.from({ length: 60 }, (_, n) => ({ toolCalls: [{ name: 'echo', args: { n }, id: `e${n}` }] }));
    turns.push({ text: 'done' });
    const long = await runToEnd((await scripted(turns, [echo])).run('go', { correlationId: 't' }));
    expectWellFormed(long);
    expect(framesOf(long).filter((f) => f.phase === 'completed')).toHaveLength(60);
    expect(long[long.length - 1].event).toMatchObject({ type: 'reply', text: 'done' });

    const capped = await runToEnd((await scripted(turns, [echo], { maxSteps: 20 })).run('go', { correlationId: 't' }));
    expectWellFormed(capped);
    expect(capped[capped.length - 1].event).toMatchObject({ type: 'error', error: expect.stringMatching(/Recursion limit of 20/) });
  });

  it('reports arguments that fail the tool schema as a failure of that tool', async () => {
    const { tool: sleepy } = sleepyTool();
    const executor = await scripted([{ toolCalls: [{ name: 'sleepy', args: { ms: 'soon' }, id: 'bad' }, { name: 'nope', id: 'missing' }] }, { text: 'ok' }], [sleepy]);
    const events = await runToEnd(executor.run('go', { correlationId: 't' }));
    expectWellFormed(events);
    expect(frameAt(events, 'bad', 'failed').error).toMatch(/^Received tool input did not match expected schema/);
    expect(frameAt(events, 'missing', 'failed').error).toBe('Tool "nope" not found.');
  });

  it('turns a model error into an error event that ends the run', async () => {
    const { tool: sleepy } = sleepyTool();
    const executor = await scripted([{ toolCalls: [{ name: 'sleepy', args: { ms: 5 }, id: 'a' }] }, { error: 'model overloaded (529)' }], [sleepy]);
    const rec = record(executor.run('go', { correlationId: 't' }));
    await rec.done;
    expectWellFormed(rec.events);
    expect(types(rec.events)).toEqual(['progress', 'progress', 'started:a', 'completed:a', 'error']);
    expect(rec.events[4].event).toEqual({ type: 'error', error: 'model overloaded (529)' });
  });

  it('aborts the graph and the tools on unsubscribe, and emits nothing after', async () => {
    const { tool: sleepy, aborted } = sleepyTool();
    const model = new ScriptedChatModel({ turns: [{ toolCalls: [{ name: 'sleepy', args: { ms: 5000 }, id: 'long' }] }, { text: 'never' }] });
    const generate = jest.spyOn(model, '_generate');
    const executor = await executorWith({ model, tools: [sleepy] });
    const rec = record(executor.run('go', { correlationId: 't' }));
    await eventually(() => framesOf(rec.events).length === 1);
    rec.subscription.unsubscribe();
    const seen = rec.events.length;
    await eventually(() => aborted.length === 1, 1000);
    expect(aborted).toEqual(['sleepy:5000']);
    await sleep(100);
    expect(rec.events).toHaveLength(seen);
    expect(rec.completed()).toBe(false);
    expect(generate).toHaveBeenCalledTimes(1);
  });

  it('closes open tools with "cancelled" when options.signal aborts, then completes', async () => {
    const { tool: sleepy, aborted } = sleepyTool();
    const executor = await scripted(
      [{ toolCalls: [{ name: 'sleepy', args: { ms: 10 }, id: 'quick' }, { name: 'sleepy', args: { ms: 5000 }, id: 'long1' }, { name: 'sleepy', args: { ms: 6000 }, id: 'long2' }] }, { text: 'never' }],
      [sleepy],
    );
    const controller = new AbortController();
    const rec = record(executor.run('go', { correlationId: 't', signal: controller.signal }));
    await eventually(() => framesOf(rec.events).some((f) => f.phase === 'completed'));
    controller.abort();
    expect(rec.completed()).toBe(true);
    expectWellFormed(rec.events);
    expect(types(rec.events)).toEqual(['progress', 'progress', 'started:quick', 'started:long1', 'started:long2', 'completed:quick', 'failed:long1', 'failed:long2']);
    expect(framesOf(rec.events).slice(-2).map((f) => f.error)).toEqual([CANCELLED, CANCELLED]);
    await eventually(() => aborted.length === 2, 1000);
    expect(aborted.sort()).toEqual(['sleepy:5000', 'sleepy:6000']);
    const seen = rec.events.length;
    await sleep(100);
    expect(rec.events).toHaveLength(seen);
  });

  it('leaves the signal of a graph that ran to its end alone, and aborts it on unsubscribe', async () => {
    const { agent, signals } = signalRecordingAgent();
    const executor = new DeepAgentExecutor(agent, { agent });
    const events = await runToEnd(executor.run('go', { correlationId: 'done' }));
    expect(events.at(-1)?.event).toMatchObject({ type: 'reply', text: 'done' });
    expect(signals[0].aborted).toBe(false);
    const rec = record(executor.run('go', { correlationId: 'stopped' }));
    await eventually(() => signals.length === 2, 1000);
    rec.subscription.unsubscribe();
    expect(signals[1].aborted).toBe(true);
  });

  it('aborts the signal of a graph whose stream failed, so tools it left running stop', async () => {
    let signal: AbortSignal | undefined;
    const agent = {
      stream: (_input: unknown, options: { signal: AbortSignal }) => {
        signal = options.signal;
        return Promise.resolve(
          (async function* () {
            yield ['values', { messages: [new HumanMessage('go')] }];
            throw new Error('tool blew up');
          })(),
        );
      },
    };
    const executor = new DeepAgentExecutor(agent, { agent });
    const events = await runToEnd(executor.run('go', { correlationId: 'failed' }));
    expect(events.at(-1)?.event).toMatchObject({ type: 'error' });
    expect(signal?.aborted).toBe(true);
  });

  it("hands a lent controller's signal to the graph (one signal per run) and aborts it when the run stops early", async () => {
    const { agent, signals } = signalRecordingAgent();
    const executor = new DeepAgentExecutor(agent, { agent });
    const done = new AbortController();
    const events = await runToEnd(executor.run('go', { correlationId: 'done', signal: done.signal, controller: done }));
    expect(events.at(-1)?.event).toMatchObject({ type: 'reply', text: 'done' });
    expect(signals[0]).toBe(done.signal);
    expect(done.signal.aborted).toBe(false);
    const stopped = new AbortController();
    const rec = record(executor.run('go', { correlationId: 'stopped', signal: stopped.signal, controller: stopped }));
    await eventually(() => signals.length === 2, 1000);
    expect(signals[1]).toBe(stopped.signal);
    rec.subscription.unsubscribe();
    expect(stopped.signal.aborted).toBe(true);
    expect(rec.events.map(({ event }) => event.type)).toEqual(['progress']);
  });

  it("closes open tools with 'cancelled' when the lent controller's signal aborts, and stops the tools", async () => {
    const { tool: sleepy, aborted } = sleepyTool();
    const executor = await scripted([{ toolCalls: [{ name: 'sleepy', args: { ms: 5000 }, id: 'long' }] }, { text: 'never' }], [sleepy]);
    const controller = new AbortController();
    const rec = record(executor.run('go', { correlationId: 't', signal: controller.signal, controller }));
    await eventually(() => framesOf(rec.events).length === 1);
    controller.abort(new Error('stop now'));
    expect(rec.completed()).toBe(true);
    expect(types(rec.events)).toEqual(['progress', 'progress', 'started:long', 'failed:long']);
    expect(framesOf(rec.events).at(-1)?.error).toBe(CANCELLED);
    await eventually(() => aborted.length === 1, 1000);
  });

  it('completes at once, running nothing, when the signal is already aborted', async () => {
    const model = new ScriptedChatModel({ turns: [{ text: 'x' }] });
    const generate = jest.spyOn(model, '_generate');
    const executor = await executorWith({ model, tools: [] });
    const events = await runToEnd(executor.run('go', { correlationId: 't', signal: AbortSignal.abort() }));
    expect(events).toEqual([]);
    expect(generate).not.toHaveBeenCalled();
  });

  describe('time budgets', () => {
    it('ends a run whose model hangs with an error event after runTimeoutMs', async () => {
      const executor = await scripted([{ hang: true }], [], { runTimeoutMs: 150 });
      const events = await runToEnd(executor.run('go', { correlationId: 't' }));
      expect(events.map((e) => e.event)).toEqual([
        { type: 'progress', text: 'thinking', step: 0 },
        { type: 'error', error: 'run timed out after 150 ms' },
      ]);
      expect(events[1].at).toBeGreaterThanOrEqual(140);
    });

    it('closes tools still open when the run budget runs out', async () => {
      const executor = await scripted([{ toolCalls: [{ name: 'hanging', id: 'h' }] }], [hanging], { runTimeoutMs: 200 });
      const events = await runToEnd(executor.run('go', { correlationId: 't' }));
      expectWellFormed(events);
      expect(types(events)).toEqual(['progress', 'progress', 'started:h', 'failed:h', 'error']);
      expect(frameAt(events, 'h', 'failed').error).toBe('run timed out after 200 ms');
    });

    it('fails a tool that never answers after toolTimeoutMs, and the run goes on', async () => {
      const { tool: sleepy } = sleepyTool();
      const executor = await scripted(
        [{ toolCalls: [{ name: 'hanging', id: 'h' }, { name: 'sleepy', args: { ms: 20 }, id: 's' }] }, { text: 'finished anyway' }],
        [hanging, sleepy],
        { toolTimeoutMs: 300 },
      );
      const events = await runToEnd(executor.run('go', { correlationId: 't' }));
      expectWellFormed(events);
      expect(types(events)).toEqual(['progress', 'progress', 'started:h', 'started:s', 'completed:s', 'failed:h', 'answer', 'answer', 'reply']);
      expect(frameAt(events, 'h', 'failed').error).toBe('timed out after 300 ms');
      expect(frameAt(events, 'h', 'failed').at - frameAt(events, 'h', 'started').at).toBeGreaterThanOrEqual(250);
      expect(events[events.length - 1].event).toMatchObject({ type: 'reply', text: 'finished anyway' });
    });
  });

  describe('frame hygiene', () => {
    class Account {
      constructor(
        readonly owner: string,
        readonly balance: bigint,
      ) {}
    }

    it('caps, makes safe and redacts huge, cyclic and secret-bearing args and results', async () => {
      const echo = tool(
        ({ kind }) => {
          if (kind === 'cyclic') {
            const node: Record<string, unknown> = { name: 'root', secret: 's3cr3t' };
            node.self = node;
            return node as unknown as string;
          }
          if (kind === 'bigint') return { total: 10n ** 30n, account: new Account('ada', 5n) } as unknown as string;
          if (kind === 'undefined') return undefined as unknown as string;
          return 'y'.repeat(200_000);
        },
        { name: 'echo', description: 'echo', schema: z.object({ kind: z.string(), password: z.string().optional(), blob: z.string().optional(), nested: z.unknown().optional() }) },
      );
      const executor = await scripted(
        [
          {
            toolCalls: [
              { name: 'echo', id: 'huge', args: { kind: 'huge', blob: 'x'.repeat(100_000), password: 'hunter2', nested: { Authorization: 'Bearer t', list: [{ api_key: 'k' }] } } },
              { name: 'echo', id: 'cyclic', args: { kind: 'cyclic' } },
              { name: 'echo', id: 'bigint', args: { kind: 'bigint' } },
              { name: 'echo', id: 'undef', args: { kind: 'undefined' } },
            ],
          },
          { text: 'ok' },
        ],
        [echo],
        { maxFieldBytes: 2048 },
      );
      const events = await runToEnd(executor.run('go', { correlationId: 't' }));
      expectWellFormed(events);
      for (const frame of framesOf(events)) {
        const { at: _at, ...wire } = frame;
        for (const field of ['args', 'result', 'error'] as const) {
          const value = (wire as Record<string, unknown>)[field];
          if (value !== undefined) expect(Buffer.byteLength(JSON.stringify(value))).toBeLessThanOrEqual(2048);
        }
      }
      const hugeArgs = frameAt(events, 'huge', 'started').args as Record<string, unknown>;
      expect(hugeArgs.password).toBe('[redacted]');
      expect(JSON.stringify(hugeArgs)).not.toMatch(/hunter2|Bearer t|"k"/);
      expect(hugeArgs.blob).toMatch(/…\[truncated: 100000 bytes\]$/);
      expect(frameAt(events, 'huge', 'completed').result).toMatch(/^y+…\[truncated: 200000 bytes\]$/);
      expect(frameAt(events, 'cyclic', 'completed').result).toEqual({ name: 'root', secret: '[redacted]', self: '[circular]' });
      expect(frameAt(events, 'bigint', 'completed').result).toEqual({ total: '1000000000000000000000000000000', account: { owner: 'ada', balance: '5' } });
      expect(frameAt(events, 'undef', 'completed').result).toBe('');
      const progress = events.map((e) => e.event).find((e) => e.type === 'progress' && e.step === 1);
      expect(JSON.stringify(progress)).not.toMatch(/hunter2/);
    });
  });

  it('yields no frames for the tool calls in the history it is given', async () => {
    const { tool: sleepy } = sleepyTool();
    const executor = await scripted([{ toolCalls: [{ name: 'sleepy', args: { ms: 1 }, id: 'new' }] }, { text: 'ok' }], [sleepy]);
    const history = [
      new HumanMessage('before'),
      new AIMessage({ content: '', tool_calls: [{ id: 'old', name: 'sleepy', args: { ms: 1 }, type: 'tool_call' }] }),
      new ToolMessage({ tool_call_id: 'old', content: '{"slept":1}', name: 'sleepy' }),
      new AIMessage('earlier answer'),
      new HumanMessage('again'),
    ];
    const events = await runToEnd(executor.run(history, { correlationId: 't' }));
    expectWellFormed(events);
    expect(framesOf(events).map((f) => f.toolCallId)).toEqual(['new', 'new']);
    expect(history).toHaveLength(5);
  });

  it.each([
    ['', 'input is empty: send the user text or a list of messages'],
    [[], 'input must be the user text or a non-empty list of LangChain messages'],
    [[{ role: 'user', content: 'hi' }], 'input message 0 is not a LangChain message'],
  ])('rejects bad input %j with a clear error event', async (input, error) => {
    const executor = await scripted([{ text: 'x' }], []);
    const events = await runToEnd(executor.run(input as never, { correlationId: 't' }));
    expect(events.map((e) => e.event)).toEqual([{ type: 'error', error }]);
  });

  describe('a custom agent', () => {
    it('streams any compiled graph with a messages state', async () => {
      const { tool: sleepy } = sleepyTool();
      const model = new ScriptedChatModel({ turns: [{ toolCalls: [{ name: 'sleepy', args: { ms: 5 }, id: 'x' }] }, { text: 'custom done' }] });
      const executor = await executorWith({ agent: createToolAgent(model, [sleepy]) });
      const events = await runToEnd(executor.run('go', { correlationId: 't' }));
      expectWellFormed(events);
      expect(types(events)).toEqual(['progress', 'progress', 'started:x', 'completed:x', 'answer', 'answer', 'reply']);
    });

    it('treats a LangGraph interrupt as a question for the user, not a failure', async () => {
      const ask = tool(
        (): string => {
          const city = interrupt({ question: 'Which city do you mean?' }) as string;
          return `weather in ${city}`;
        },
        { name: 'ask', description: 'asks the user', schema: z.object({}) },
      );
      const model = new ScriptedChatModel({ turns: [{ toolCalls: [{ name: 'ask', id: 'q' }] }] });
      const agent = new StateGraph(MessagesAnnotation)
        .addNode('agent', async (state) => ({ messages: [await model.invoke(state.messages)] }))
        .addNode('tools', new ToolNode([ask]))
        .addEdge(START, 'agent')
        .addConditionalEdges('agent', toolsCondition, ['tools', END])
        .addEdge('tools', 'agent')
        .compile({ checkpointer: new MemorySaver() });
      const executor = await executorWith({ agent });
      const events = await runToEnd(executor.run('weather please', { correlationId: 'thread-1' }));
      expectWellFormed(events);
      expect(types(events)).toEqual(['progress', 'progress', 'started:q', 'answer', 'reply']);
      expect(events[3].event).toEqual({ type: 'answer', text: 'Which city do you mean?', append: false, last: true });
      expect(events[4].event).toMatchObject({ type: 'reply', text: 'Which city do you mean?' });
    });
  });
});
