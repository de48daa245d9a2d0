import { Test, type TestingModule } from '@nestjs/testing';
import { Module } from '@nestjs/common';
import type { EventEmitter2 } from 'eventemitter2';
import { RUNTIME_EMITTER } from './runtime.constants';
import { AIMessage } from '@langchain/core/messages';
import { Observable, Subscription, UnsubscriptionError, config, type Subscriber } from 'rxjs';
import { AgentExecutor, type ExecutorEvent, type ExecutorInput, type ExecutorRunOptions } from '../executor';
import type { ToolCallArtifactData } from '../extensions';
import { AgentBus } from './agent-bus';
import { AgentRuntimeService } from './agent-runtime.service';
import type { NarrationOptions } from './narration';
import { RuntimeModule } from './runtime.module';
import type { ReplyPayload, TaskTopicPayloads } from './runtime.topics';

/** One scripted step: an event, optionally after a delay in ms. */
type Step = { after?: number; event: ExecutorEvent };

/**
 * A fake AgentExecutor that plays a script per correlationId with timers, honours its signal
 * like the real one (open tools closed as failed "cancelled", then complete) and records aborts.
 */
class ScriptedExecutor extends AgentExecutor {
  readonly scripts = new Map<string, Step[]>();
  readonly aborted = new Set<string>();
  readonly unsubscribed = new Set<string>();
  readonly inputs = new Map<string, ExecutorInput>();
  readonly runOptions = new Map<string, ExecutorRunOptions>();

  run(input: ExecutorInput, options: ExecutorRunOptions): Observable<ExecutorEvent> {
    const { correlationId, signal } = options;
    this.inputs.set(correlationId, input);
    this.runOptions.set(correlationId, options);
    return new Observable<ExecutorEvent>((sub) => {
      const open = new Map<string, string>();
      const steps = this.scripts.get(correlationId) ?? [];
      let timer: NodeJS.Timeout | undefined;
      const emit = (event: ExecutorEvent): void => {
        if (event.type === 'toolFrame') {
          if (event.frame.phase === 'started') open.set(event.frame.toolCallId, event.frame.name);
          else open.delete(event.frame.toolCallId);
        }
        sub.next(event);
      };
      const onAbort = (): void => {
        this.aborted.add(correlationId);
        clearTimeout(timer);
        for (const [toolCallId, name] of open) emit({ type: 'toolFrame', frame: { toolCallId, name, phase: 'failed', error: 'cancelled' } });
        sub.complete();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      emit({ type: 'progress', text: 'thinking', step: 0 });
      let i = 0;
      const next = (): void => {
        while (i < steps.length) {
          const step = steps[i];
          if (step.after !== undefined && step.after > 0) {
            step.after = -step.after; // wait once
            timer = setTimeout(next, -step.after);
            return;
          }
          i++;
          emit(step.event);
        }
        sub.complete();
      };
      next();
      return () => {
        this.unsubscribed.add(correlationId);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
    });
  }
}

const frame = (toolCallId: string, name: string, phase: ToolCallArtifactData['phase'], extra: object = {}): ExecutorEvent =>
  ({ type: 'toolFrame', frame: { toolCallId, name, phase, ...extra } as ToolCallArtifactData });
const reply = (text: string): ExecutorEvent => ({ type: 'reply', message: new AIMessage(text), text });

type Seen = { kind: keyof TaskTopicPayloads; payload: unknown };

/** Subscribes to a run's three topics, like the A2A front does, and collects what arrives. */
function watch(bus: AgentBus, cid: string): { seen: Seen[]; done: Promise<ReplyPayload>; sub: Subscription } {
  const seen: Seen[] = [];
  const sub = new Subscription();
  const done = new Promise<ReplyPayload>((resolve) => {
    sub.add(bus.topic$('progress', cid).subscribe((p) => seen.push({ kind: 'progress', payload: p })));
    sub.add(bus.topic$('toolframe', cid).subscribe((p) => seen.push({ kind: 'toolframe', payload: p })));
    sub.add(bus.topic$('answer', cid).subscribe((p) => seen.push({ kind: 'answer', payload: p })));
    sub.add(
      bus.topic$('reply', cid).subscribe((p) => {
        seen.push({ kind: 'reply', payload: p });
        resolve(p);
      }),
    );
  });
  return { seen, done, sub };
}

/** A runtime module of a spec's own (not global) around `executor`, with these narration options, initialised. */
async function runtimeWith(executor: ScriptedExecutor, narration: NarrationOptions): Promise<TestingModule> {
  @Module({ providers: [{ provide: AgentExecutor, useValue: executor }], exports: [AgentExecutor] })
  class OwnExecutorModule {}
  const moduleRef = await Test.createTestingModule({
    imports: [RuntimeModule.forRoot({ executor: OwnExecutorModule, narration, isGlobal: false })],
  }).compile();
  await moduleRef.init();
  return moduleRef;
}

describe('AgentRuntimeService', () => {
  let executor: ScriptedExecutor;
  let bus: AgentBus;
  let runtime: AgentRuntimeService;
  let emitter: EventEmitter2;
  let close: () => Promise<void>;

  beforeEach(async () => {
    executor = new ScriptedExecutor();
    @Module({ providers: [{ provide: AgentExecutor, useValue: executor }], exports: [AgentExecutor] })
    class FakeExecutorModule {}
    const moduleRef = await Test.createTestingModule({
      imports: [RuntimeModule.forRoot({ executor: FakeExecutorModule, narration: { phrases: { lookup: 'looking it up' } } })],
    }).compile();
    await moduleRef.init();
    bus = moduleRef.get(AgentBus);
    runtime = moduleRef.get(AgentRuntimeService);
    emitter = moduleRef.get<EventEmitter2>(RUNTIME_EMITTER);
    close = () => moduleRef.close();
  });

  afterEach(async () => {
    await close();
  });

  it('runs on agent.skill.request and publishes every event on its topic, in order', async () => {
    executor.scripts.set('t1', [
      { event: { type: 'progress', text: 'running lookup', step: 1, tools: [{ toolCallId: 'a', name: 'lookup', args: {} }] } },
      { event: frame('a', 'lookup', 'started', { args: { q: 'x' } }) },
      { after: 5, event: frame('a', 'lookup', 'completed', { result: 42 }) },
      { event: reply('forty-two') },
    ]);
    const w = watch(bus, 't1');
    bus.publishRequest({ correlationId: 't1', message: 'what is it?' });
    expect(await w.done).toEqual({ status: 'completed', text: 'forty-two' });
    expect(w.seen).toEqual([
      { kind: 'progress', payload: { text: 'thinking', step: 0 } },
      { kind: 'progress', payload: { text: 'looking it up', step: 1 } },
      { kind: 'toolframe', payload: { frame: { toolCallId: 'a', name: 'lookup', phase: 'started', args: { q: 'x' } } } },
      { kind: 'toolframe', payload: { frame: { toolCallId: 'a', name: 'lookup', phase: 'completed', result: 42 } } },
      { kind: 'reply', payload: { status: 'completed', text: 'forty-two' } },
    ]);
    expect(executor.inputs.get('t1')).toBe('what is it?');
    w.sub.unsubscribe();
  });

  it('publishes the answer pieces on the answer topic, and the model\'s own words as narration', async () => {
    executor.scripts.set('t-ans', [
      { event: { type: 'progress', text: 'running lookup', step: 1, tools: [{ toolCallId: 'a', name: 'lookup', args: {} }], said: 'Let me look.' } },
      { event: { type: 'answer', text: 'forty', append: false, last: false } },
      { after: 5, event: { type: 'answer', text: '-two', append: true, last: true } },
      { event: reply('forty-two') },
    ]);
    const w = watch(bus, 't-ans');
    bus.publishRequest({ correlationId: 't-ans', message: 'what is it?' });
    await w.done;
    expect(w.seen.slice(1)).toEqual([
      { kind: 'progress', payload: { text: 'Let me look.', step: 1 } },
      { kind: 'answer', payload: { text: 'forty', append: false, last: false } },
      { kind: 'answer', payload: { text: '-two', append: true, last: true } },
      { kind: 'reply', payload: { status: 'completed', text: 'forty-two' } },
    ]);
    w.sub.unsubscribe();
  });

  it('reports each ended tool call once on toolCalls$, with its started name, also when tools overlap or start again', async () => {
    executor.scripts.set('tc', [
      { event: frame('a', 'lookup', 'started') },
      { event: frame('b', 'fetch', 'started') },
      { event: frame('a', 'lookup', 'completed', { result: 1 }) },
      { event: frame('c', 'calc', 'started') },
      { event: frame('c', 'calc', 'started') },
      { event: frame('b', 'fetch', 'failed', { error: 'x' }) },
      { event: frame('b', 'fetch', 'completed', { result: 2 }) },
      { event: frame('zz', 'never_started', 'completed', { result: 3 }) },
      { event: frame('c', 'renamed', 'completed', { result: 4 }) },
      { event: frame('d', 'left_open', 'started') },
      { event: reply('done') },
    ]);
    const calls: { name: string; outcome: string }[] = [];
    const sub = runtime.toolCalls$().subscribe(({ name, outcome, seconds }) => {
      expect(seconds).toBeGreaterThanOrEqual(0);
      calls.push({ name, outcome });
    });
    const w = watch(bus, 'tc');
    bus.publishRequest({ correlationId: 'tc', message: 'go' });
    await w.done;
    expect(calls).toEqual([
      { name: 'lookup', outcome: 'completed' },
      { name: 'fetch', outcome: 'failed' },
      { name: 'calc', outcome: 'completed' },
    ]);
    sub.unsubscribe();
    w.sub.unsubscribe();
  });

  it('calls onToolCall listeners with each ended call; one that throws reaches neither the run nor the others, and a stopped one hears nothing more', async () => {
    executor.scripts.set('tl', [
      { event: frame('a', 'lookup', 'started') },
      { event: frame('a', 'lookup', 'completed', { result: 1 }) },
      { event: frame('b', 'fetch', 'started') },
      { event: frame('b', 'fetch', 'failed', { error: 'x' }) },
      { event: reply('done') },
    ]);
    const heard: [string, string][] = [];
    const stopThrowing = runtime.onToolCall(() => {
      throw new Error('listener broke');
    });
    const stopHearing = runtime.onToolCall((name, outcome, seconds) => {
      expect(seconds).toBeGreaterThanOrEqual(0);
      heard.push([name, outcome]);
    });
    const w = watch(bus, 'tl');
    bus.publishRequest({ correlationId: 'tl', message: 'go' });
    await w.done;
    expect(heard).toEqual([
      ['lookup', 'completed'],
      ['fetch', 'failed'],
    ]);
    expect(w.seen.at(-1)).toEqual({ kind: 'reply', payload: { status: 'completed', text: 'done' } });
    stopHearing();
    stopThrowing();
    executor.scripts.set('tl2', [{ event: frame('c', 'calc', 'started') }, { event: frame('c', 'calc', 'completed', { result: 2 }) }, { event: reply('done') }]);
    const w2 = watch(bus, 'tl2');
    bus.publishRequest({ correlationId: 'tl2', message: 'go' });
    await w2.done;
    expect(heard).toHaveLength(2);
    w.sub.unsubscribe();
    w2.sub.unsubscribe();
  });

  it('gives the executor the history as LangChain messages, then the new message', async () => {
    executor.scripts.set('h', [{ event: reply('ok') }]);
    const w = watch(bus, 'h');
    bus.publishRequest({
      correlationId: 'h',
      message: 'and in Rome?',
      history: [
        { role: 'user', text: 'weather in Paris' },
        { role: 'agent', text: 'sunny' },
      ],
    });
    await w.done;
    const input = executor.inputs.get('h') as Array<{ getType(): string; content: unknown }>;
    expect(input.map((m) => [m.getType(), m.content])).toEqual([
      ['human', 'weather in Paris'],
      ['ai', 'sunny'],
      ['human', 'and in Rome?'],
    ]);
    w.sub.unsubscribe();
  });

  it('1,000 overlapping runs: every subscriber sees exactly its own frames, in order; listeners back to baseline', async () => {
    const baseline = emitter.listenerCount();
    const n = 1000;
    const watchers = [];
    for (let i = 0; i < n; i++) {
      const cid = `run-${i}`;
      executor.scripts.set(cid, [
        { event: frame(`${cid}-a`, `tool_${i}`, 'started', { args: { i } }) },
        { event: frame(`${cid}-b`, `tool_${i}_b`, 'started', { args: { i } }) },
        { after: 1 + (i % 7), event: frame(`${cid}-b`, `tool_${i}_b`, 'completed', { result: i }) },
        { after: 1 + ((i * 3) % 5), event: frame(`${cid}-a`, `tool_${i}`, 'failed', { error: `e${i}` }) },
        { event: reply(`answer ${i}`) },
      ]);
      watchers.push(watch(bus, cid));
    }
    for (let i = 0; i < n; i++) bus.publishRequest({ correlationId: `run-${i}`, message: `q${i}` });
    expect(runtime.activeRuns()).toBe(n);
    await Promise.all(watchers.map((w) => w.done));
    for (let i = 0; i < n; i++) {
      const cid = `run-${i}`;
      const frames = watchers[i].seen.filter((s) => s.kind === 'toolframe').map((s) => (s.payload as { frame: ToolCallArtifactData }).frame);
      expect(frames.map((f) => `${f.toolCallId}:${f.phase}`)).toEqual([
        `${cid}-a:started`,
        `${cid}-b:started`,
        `${cid}-b:completed`,
        `${cid}-a:failed`,
      ]);
      expect(watchers[i].seen.at(-1)).toEqual({ kind: 'reply', payload: { status: 'completed', text: `answer ${i}` } });
      expect(watchers[i].seen).toHaveLength(6);
    }
    for (const w of watchers) w.sub.unsubscribe();
    expect(runtime.activeRuns()).toBe(0);
    expect(emitter.listenerCount()).toBe(baseline);
  });

  it('200 concurrent correlationIds with distinct tools: no cross-talk', async () => {
    const n = 200;
    const watchers = [];
    for (let i = 0; i < n; i++) {
      const steps: Step[] = [];
      for (let k = 0; k < 5; k++) steps.push({ after: (i + k) % 3, event: frame(`c${i}_${k}`, `t${i}`, 'started') });
      for (let k = 4; k >= 0; k--) steps.push({ after: (i * k) % 4, event: frame(`c${i}_${k}`, `t${i}`, 'completed', { result: `${i}/${k}` }) });
      steps.push({ event: reply(`r${i}`) });
      executor.scripts.set(`x${i}`, steps);
      watchers.push(watch(bus, `x${i}`));
    }
    for (let i = 0; i < n; i++) bus.publishRequest({ correlationId: `x${i}`, message: 'go' });
    await Promise.all(watchers.map((w) => w.done));
    watchers.forEach((w, i) => {
      const frames = w.seen.filter((s) => s.kind === 'toolframe').map((s) => (s.payload as { frame: ToolCallArtifactData }).frame);
      expect(frames).toHaveLength(10);
      for (const f of frames) {
        expect(f.name).toBe(`t${i}`);
        expect(f.toolCallId.startsWith(`c${i}_`)).toBe(true);
        if (f.phase === 'completed') expect(f.result).toBe(`${i}/${f.toolCallId.split('_')[1]}`);
      }
      w.sub.unsubscribe();
    });
  });

  it('cancel mid-run: the run is aborted, open tools closed as failed "cancelled", reply says cancelled, nothing after', async () => {
    executor.scripts.set('c1', [
      { event: frame('slow', 'slow_task', 'started') },
      { event: frame('quick', 'calculator', 'started') },
      { after: 1, event: frame('quick', 'calculator', 'completed', { result: 4 }) },
      { after: 10_000, event: frame('slow', 'slow_task', 'completed', { result: 'late' }) },
      { event: reply('too late') },
    ]);
    executor.scripts.set('other', [{ event: frame('o', 'weather', 'started') }, { after: 30, event: frame('o', 'weather', 'completed') }, { event: reply('fine') }]);
    const w = watch(bus, 'c1');
    const other = watch(bus, 'other');
    bus.publishRequest({ correlationId: 'c1', message: 'go' });
    bus.publishRequest({ correlationId: 'other', message: 'go' });
    await new Promise((r) => setTimeout(r, 20));
    bus.publishCancel({ correlationId: 'c1', reason: 'user pressed stop' });
    expect(await w.done).toEqual({ status: 'cancelled', reason: 'user pressed stop' });
    expect(executor.aborted.has('c1')).toBe(true);
    const tail = w.seen.slice(-2);
    expect(tail).toEqual([
      { kind: 'toolframe', payload: { frame: { toolCallId: 'slow', name: 'slow_task', phase: 'failed', error: 'cancelled' } } },
      { kind: 'reply', payload: { status: 'cancelled', reason: 'user pressed stop' } },
    ]);
    const count = w.seen.length;
    expect(runtime.cancel('c1')).toBe(false); // already settled
    await new Promise((r) => setTimeout(r, 20));
    expect(w.seen).toHaveLength(count);
    // the other run was not disturbed
    expect(await other.done).toEqual({ status: 'completed', text: 'fine' });
    w.sub.unsubscribe();
    other.sub.unsubscribe();
  });

  it("lends the executor the run's controller (one signal per run), whose signal a cancel aborts", async () => {
    executor.scripts.set('lent', [{ event: frame('t', 'slow_task', 'started') }, { after: 10_000, event: reply('late') }]);
    const w = watch(bus, 'lent');
    bus.publishRequest({ correlationId: 'lent', message: 'go' });
    const options = executor.runOptions.get('lent');
    expect(options?.controller).toBeInstanceOf(AbortController);
    expect(options?.controller?.signal).toBe(options?.signal);
    expect(options?.signal?.aborted).toBe(false);
    bus.publishCancel({ correlationId: 'lent', reason: 'stop' });
    expect(await w.done).toEqual({ status: 'cancelled', reason: 'stop' });
    expect(options?.signal?.aborted).toBe(true);
    w.sub.unsubscribe();
  });

  it('settles a cancelled run whose executor never completes, after the grace period', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] });
    try {
      const stubborn = new Observable<ExecutorEvent>((sub) => sub.next({ type: 'progress', text: 'thinking', step: 0 }));
      jest.spyOn(executor, 'run').mockReturnValue(stubborn);
      const w = watch(bus, 's');
      bus.publishRequest({ correlationId: 's', message: 'x' });
      runtime.cancel('s');
      expect(w.seen.some((s) => s.kind === 'reply')).toBe(false);
      jest.advanceTimersByTime(2_000);
      expect(await w.done).toEqual({ status: 'cancelled', reason: 'cancelled' });
      expect(runtime.activeRuns()).toBe(0);
      w.sub.unsubscribe();
    } finally {
      jest.useRealTimers();
    }
  });

  it('turns an error event, an errored stream and a reply-less end into a failed reply', async () => {
    executor.scripts.set('e1', [{ event: { type: 'error', error: 'model unavailable' } }, { event: reply('ignored') }]);
    executor.scripts.set('e3', []);
    const w1 = watch(bus, 'e1');
    const w3 = watch(bus, 'e3');
    bus.publishRequest({ correlationId: 'e1', message: 'x' });
    bus.publishRequest({ correlationId: 'e3', message: 'x' });
    expect(await w1.done).toEqual({ status: 'failed', error: 'model unavailable' });
    expect(w1.seen.filter((s) => s.kind === 'reply')).toHaveLength(1);
    expect(await w3.done).toEqual({ status: 'failed', error: 'the agent run ended without an answer' });
    jest.spyOn(executor, 'run').mockReturnValueOnce(new Observable((sub) => sub.error(new Error('graph exploded'))));
    const w2 = watch(bus, 'e2');
    bus.publishRequest({ correlationId: 'e2', message: 'x' });
    expect(await w2.done).toEqual({ status: 'failed', error: 'graph exploded' });
    for (const w of [w1, w2, w3]) w.sub.unsubscribe();
  });

  it('drops events published after a run settled; a later run on the same topic name sees only its own', async () => {
    let late: ((e: ExecutorEvent) => void) | undefined;
    jest.spyOn(executor, 'run').mockReturnValueOnce(
      new Observable<ExecutorEvent>((sub) => {
        late = (e) => sub.next(e);
        sub.next(reply('done'));
      }),
    );
    const first = watch(bus, 'same');
    bus.publishRequest({ correlationId: 'same', message: 'x' });
    await first.done;
    first.sub.unsubscribe();

    executor.scripts.set('same', [{ after: 5, event: reply('second') }]);
    const second = watch(bus, 'same');
    bus.publishRequest({ correlationId: 'same', message: 'y' });
    late?.(frame('ghost', 'old_tool', 'completed'));
    expect(await second.done).toEqual({ status: 'completed', text: 'second' });
    expect(second.seen.some((s) => s.kind === 'toolframe')).toBe(false);
    second.sub.unsubscribe();
  });

  it('refuses a second request for a running correlationId', async () => {
    executor.scripts.set('d', [{ after: 5, event: reply('once') }]);
    const w = watch(bus, 'd');
    expect(runtime.start({ correlationId: 'd', message: 'a' })).toBe(true);
    expect(runtime.start({ correlationId: 'd', message: 'b' })).toBe(false);
    await w.done;
    expect(w.seen.filter((s) => s.kind === 'reply')).toHaveLength(1);
    w.sub.unsubscribe();
  });

  it('runs one after another: each is live while it runs and gone after, its topics unbound', async () => {
    const baseline = emitter.listenerCount();
    for (let i = 0; i < 50; i++) {
      const cid = `seq-${i % 3}`;
      executor.scripts.set(cid, [{ event: frame(`c${i}`, 'lookup', 'started') }, { after: 1, event: frame(`c${i}`, 'lookup', 'completed') }, { event: reply(`r${i}`) }]);
      const w = watch(bus, cid);
      expect(runtime.start({ correlationId: cid, message: 'q' })).toBe(true);
      expect([runtime.activeRuns(), runtime.isRunning(cid), runtime.isRunning('')]).toEqual([1, true, false]);
      expect(await w.done).toEqual({ status: 'completed', text: `r${i}` });
      expect(w.seen.map((s) => s.kind)).toEqual(['progress', 'toolframe', 'toolframe', 'reply']);
      w.sub.unsubscribe();
      expect([runtime.activeRuns(), runtime.isRunning(cid)]).toEqual([0, false]);
      expect(emitter.listenerCount()).toBe(baseline);
    }
  });

  it("runs the executor's teardown once, however the run ends", async () => {
    const calls: string[] = [];
    const withTeardown = (cid: string, body: (sub: Subscriber<ExecutorEvent>) => void): Observable<ExecutorEvent> =>
      new Observable<ExecutorEvent>((sub) => {
        body(sub);
        return () => calls.push(cid);
      });
    const runs: Record<string, (sub: Subscriber<ExecutorEvent>) => void> = {
      // Settled before subscribe() returns: the teardown runs as soon as it is handed over.
      sync: (sub) => sub.next(reply('at once')),
      later: (sub) => setTimeout(() => sub.next(reply('later')), 2),
      errors: (sub) => setTimeout(() => sub.error(new Error('boom')), 2),
      completes: (sub) => setTimeout(() => sub.complete(), 2),
      cancelled: () => undefined,
    };
    jest.spyOn(executor, 'run').mockImplementation((_input, options) => withTeardown(options.correlationId, runs[options.correlationId]));
    const watchers = Object.keys(runs).map((cid) => {
      const w = watch(bus, cid);
      runtime.start({ correlationId: cid, message: 'q' });
      return w;
    });
    runtime.cancel('cancelled', 'stop');
    const replies = await Promise.all(watchers.map((w) => w.done));
    expect(replies.map((r) => r.status)).toEqual(['completed', 'completed', 'failed', 'failed', 'cancelled']);
    expect(calls.sort()).toEqual(['cancelled', 'completes', 'errors', 'later', 'sync']);
    for (const w of watchers) w.sub.unsubscribe();
    expect(runtime.activeRuns()).toBe(0);
  });

  it("reports a throwing teardown as RxJS does (an UnsubscriptionError), after the run's reply", async () => {
    const reported = new Promise<unknown>((resolve) => {
      config.onUnhandledError = resolve;
    });
    try {
      jest.spyOn(executor, 'run').mockReturnValueOnce(
        new Observable<ExecutorEvent>((sub) => {
          setTimeout(() => sub.next(reply('done')), 2);
          return () => {
            throw new Error('teardown bug');
          };
        }),
      );
      const w = watch(bus, 'tears');
      runtime.start({ correlationId: 'tears', message: 'q' });
      expect(await w.done).toEqual({ status: 'completed', text: 'done' });
      const err = await reported;
      expect(err).toBeInstanceOf(UnsubscriptionError);
      expect((err as UnsubscriptionError).errors).toEqual([new Error('teardown bug')]);
      expect(runtime.activeRuns()).toBe(0);
      w.sub.unsubscribe();
    } finally {
      config.onUnhandledError = null;
    }
  });

  it('cancels every live run at shutdown', async () => {
    const watchers = ['s1', 's2', 's3'].map((cid) => {
      executor.scripts.set(cid, [{ event: frame(`${cid}-t`, 'lookup', 'started') }, { after: 60_000, event: reply('never') }]);
      const w = watch(bus, cid);
      runtime.start({ correlationId: cid, message: 'q' });
      return w;
    });
    expect(runtime.activeRuns()).toBe(3);
    runtime.onApplicationShutdown();
    for (const w of watchers) {
      expect(await w.done).toEqual({ status: 'cancelled', reason: 'server shutting down' });
      w.sub.unsubscribe();
    }
    expect(runtime.activeRuns()).toBe(0);
    expect([...executor.aborted].sort()).toEqual(['s1', 's2', 's3']);
  });

  it('a listener that throws (e.g. a backend @OnEvent handler) disturbs neither its run nor another', async () => {
    executor.scripts.set('bad', [{ event: frame('b', 'x', 'started') }, { after: 2, event: reply('bad done') }]);
    executor.scripts.set('good', [{ event: frame('g', 'y', 'started') }, { after: 2, event: reply('good done') }]);
    const throwing = (): void => {
      throw new Error('listener bug');
    };
    emitter.on('agent.skill.toolframe.bad', throwing);
    const bad = watch(bus, 'bad');
    const good = watch(bus, 'good');
    bus.publishRequest({ correlationId: 'bad', message: 'x' });
    bus.publishRequest({ correlationId: 'good', message: 'x' });
    expect(await bad.done).toEqual({ status: 'completed', text: 'bad done' });
    expect(await good.done).toEqual({ status: 'completed', text: 'good done' });
    emitter.off('agent.skill.toolframe.bad', throwing);
    expect(bad.seen.filter((x) => x.kind === 'toolframe')).toHaveLength(1);
    bad.sub.unsubscribe();
    good.sub.unsubscribe();
  });

  it('reports a throw from its handling of an event as RxJS reports an observer\'s, not into the executor, and the run goes on', async () => {
    const moduleRef = await runtimeWith(executor, {
      phrases: {
        broken: () => {
          throw new Error('phrase bug');
        },
      },
    });
    const localBus = moduleRef.get(AgentBus);
    const reported: unknown[] = [];
    const reportedOnce = new Promise<void>((resolve) => {
      config.onUnhandledError = (err) => {
        reported.push(err);
        resolve();
      };
    });
    try {
      executor.scripts.set('throws', [
        { event: { type: 'progress', text: 'x', step: 1, tools: [{ toolCallId: 'a', name: 'broken', args: {} }] } },
        { event: frame('a', 'broken', 'started') },
        { event: reply('still answered') },
      ]);
      const w = watch(localBus, 'throws');
      localBus.publishRequest({ correlationId: 'throws', message: 'x' });
      expect(await w.done).toEqual({ status: 'completed', text: 'still answered' });
      await reportedOnce;
      expect(reported).toEqual([new Error('phrase bug')]);
      expect(w.seen.map((x) => x.kind)).toEqual(['progress', 'toolframe', 'reply']);
      w.sub.unsubscribe();
    } finally {
      config.onUnhandledError = null;
      await moduleRef.close();
    }
  });

  it('narrates each turn from its tool calls and skips turns whose tools are all silent', async () => {
    const moduleRef = await runtimeWith(executor, { silent: ['think'] });
    const localBus = moduleRef.get(AgentBus);
    const tools = (...names: string[]) => names.map((name, i) => ({ toolCallId: `${name}${i}`, name, args: {} }));
    executor.scripts.set('n', [
      { event: { type: 'progress', text: 'x', step: 1, tools: tools('weather', 'world_clock', 'weather') } },
      { event: { type: 'progress', text: 'x', step: 2, tools: tools('think') } },
      { event: { type: 'progress', text: 'x', step: 3, tools: tools('think', 'mystery') } },
      { event: reply('ok') },
    ]);
    const w = watch(localBus, 'n');
    localBus.publishRequest({ correlationId: 'n', message: 'x' });
    await w.done;
    expect(w.seen.filter((s) => s.kind === 'progress').map((s) => s.payload)).toEqual([
      { text: 'thinking', step: 0 },
      { text: 'checking the weather; checking the clock', step: 1 },
      { text: 'running mystery', step: 3 },
    ]);
    w.sub.unsubscribe();
    await moduleRef.close();
  });
});
