import { Test } from '@nestjs/testing';
import { EventEmitter2 } from 'eventemitter2';
import { RUNTIME_EMITTER } from './runtime.constants';
import { AgentBus } from './agent-bus';
import { EventEmitterAgentBus } from './event-emitter-agent-bus';
import { RuntimeModule } from './runtime.module';
import { RuntimeEmitter } from './runtime-emitter';
import type { TaskTopicKind, TaskTopicPayloads } from './runtime.topics';
import { Logger, Module } from '@nestjs/common';
import { AgentExecutor } from '../executor';
import { EMPTY } from 'rxjs';

describe('EventEmitterAgentBus', () => {
  let bus: AgentBus;
  let emitter: EventEmitter2;

  beforeAll(async () => {
    @Module({ providers: [{ provide: AgentExecutor, useValue: { run: () => EMPTY } }], exports: [AgentExecutor] })
    class NoExecutor {}
    const moduleRef = await Test.createTestingModule({
      imports: [RuntimeModule.forRoot({ executor: NoExecutor, serveRequests: false })],
    }).compile();
    bus = moduleRef.get(AgentBus);
    emitter = moduleRef.get<EventEmitter2>(RUNTIME_EMITTER);
  });

  it('runs EventEmitter2 with wildcard off', () => {
    // with wildcard on, listeners() without a type throws; the default bus must never need that
    expect(() => emitter.listeners()).not.toThrow();
    expect(emitter.getMaxListeners()).toBe(0);
  });

  it('topic$ adds exactly one listener on subscribe and removes it on unsubscribe', () => {
    const base = bus.listenerCount();
    const topic = 'agent.skill.toolframe.t-1';
    const obs = bus.topic$('toolframe', 't-1');
    expect(emitter.listenerCount(topic)).toBe(0);
    const a = obs.subscribe();
    expect(emitter.listenerCount(topic)).toBe(1);
    const b = obs.subscribe();
    expect(emitter.listenerCount(topic)).toBe(2);
    a.unsubscribe();
    b.unsubscribe();
    expect(emitter.listenerCount(topic)).toBe(0);
    expect(emitter.eventNames()).not.toContain(topic);
    expect(bus.listenerCount()).toBe(base);
  });

  it('delivers in publish order and only to the topic of that correlationId', () => {
    const got: string[] = [];
    const s1 = bus.topic$('progress', 'a').subscribe((p) => got.push(`a:${p.text}`));
    const s2 = bus.topic$('progress', 'b').subscribe((p) => got.push(`b:${p.text}`));
    bus.publish('progress', 'a', { text: '1', step: 1 });
    bus.publish('progress', 'b', { text: '2', step: 1 });
    bus.publish('progress', 'a', { text: '3', step: 2 });
    expect(got).toEqual(['a:1', 'b:2', 'a:3']);
    s1.unsubscribe();
    s2.unsubscribe();
  });

  it('holds thousands of listeners on one topic without a max-listener warning', () => {
    const warn = jest.spyOn(process, 'emitWarning');
    const subs = Array.from({ length: 5000 }, () => bus.topic$('reply', 'busy').subscribe());
    expect(emitter.listenerCount('agent.skill.reply.busy')).toBe(5000);
    for (const s of subs) s.unsubscribe();
    expect(warn).not.toHaveBeenCalled();
    warn.mockRestore();
  });

  it('keeps delivering to later listeners and onAny listeners when one listener throws', () => {
    const got: string[] = [];
    const bad = (): void => {
      throw new Error('bug');
    };
    const any = (topic: string | string[]): void => void got.push(`any:${String(topic)}`);
    emitter.on('agent.skill.progress.x', bad);
    emitter.onAny(any);
    const s = bus.topic$('progress', 'x').subscribe((p) => got.push(p.text));
    bus.publish('progress', 'x', { text: 'hello', step: 0 });
    expect(got).toEqual(['hello', 'any:agent.skill.progress.x']);
    s.unsubscribe();
    emitter.off('agent.skill.progress.x', bad);
    emitter.offAny(any);
  });

  it('hands a task topic publish to an onAny listener when nothing else listens to the topic', () => {
    const got: string[] = [];
    const any = (topic: string | string[]): void => void got.push(String(topic));
    emitter.onAny(any);
    const s = bus.topic$('progress', 'only-any').subscribe((p) => got.push(p.text));
    bus.publish('progress', 'only-any', { text: 'hello', step: 0 });
    bus.publish('progress', 'nobody', { text: 'unheard', step: 0 });
    expect(got).toEqual(['hello', 'agent.skill.progress.only-any', 'agent.skill.progress.nobody']);
    s.unsubscribe();
    emitter.offAny(any);
    bus.publish('progress', 'nobody', { text: 'unheard', step: 0 });
    expect(got).toHaveLength(3);
  });

  it('delivers a task topic publish to listeners added with once, many, prepend and addListener after publishes nobody else heard', () => {
    // A fresh RuntimeEmitter: until a listener is added under the task topics' prefix, it answers
    // "nobody else listens" without a lookup; each way of adding one must end that.
    const fresh = new RuntimeEmitter();
    const freshBus = new EventEmitterAgentBus(fresh);
    const got: string[] = [];
    const s = freshBus.topic$('progress', 't').subscribe((p) => got.push(p.text));
    freshBus.publish('progress', 't', { text: 'a', step: 0 });
    fresh.once('agent.skill.progress.t', (p: { text: string }) => void got.push(`once:${p.text}`));
    fresh.many('agent.skill.answer.t', 2, (p: { text: string }) => void got.push(`many:${p.text}`));
    fresh.prependListener('agent.skill.reply.t', () => void got.push('prepend'));
    fresh.addListener('agent.skill.toolframe.u', () => void got.push('add'));
    freshBus.publish('progress', 't', { text: 'b', step: 1 });
    freshBus.publish('answer', 't', { text: 'c', append: true, last: false });
    freshBus.publish('reply', 't', { status: 'completed', text: 'd' } as never);
    freshBus.publish('toolframe', 'u', { frame: { toolCallId: 'x' } } as never);
    freshBus.publish('progress', 't', { text: 'e', step: 2 });
    expect(got).toEqual(['a', 'b', 'once:b', 'many:c', 'prepend', 'add', 'e']);
    s.unsubscribe();
  });

  it('a task publisher on RuntimeModule’s emitter logs a subscriber that throws, with its topic, and goes on to the next', () => {
    const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const got: string[] = [];
    const noop = { toolframe: () => undefined, answer: () => undefined, reply: () => undefined };
    const stopBad = bus.listenTask('throws', {
      ...noop,
      progress: () => {
        throw new Error('subscriber bug');
      },
    });
    const stopGood = bus.listenTask('throws', { ...noop, progress: (p) => void got.push(p.text) });
    bus.taskPublisher('throws').publish('progress', { text: 'still here', step: 0 });
    expect(got).toEqual(['still here']);
    expect(error).toHaveBeenCalledWith('a listener of agent.skill.progress.throws threw: subscriber bug');
    error.mockRestore();
    stopBad();
    stopGood();
  });

  it('a task publisher of a bus whose subclass overrides publish goes through that publish', () => {
    const seen: string[] = [];
    class Recording extends EventEmitterAgentBus {
      override publish<K extends TaskTopicKind>(kind: K, correlationId: string, payload: TaskTopicPayloads[K]): void {
        seen.push(`${kind}:${correlationId}`);
        super.publish(kind, correlationId, payload);
      }
    }
    const recording = new Recording(new RuntimeEmitter());
    const got: string[] = [];
    const s = recording.topic$('progress', 'r').subscribe((p) => got.push(p.text));
    recording.taskPublisher('r').publish('progress', { text: 'hi', step: 0 });
    expect(seen).toEqual(['progress:r']);
    expect(got).toEqual(['hi']);
    s.unsubscribe();
  });

  describe.each([
    ['RuntimeModule’s emitter', () => ({ bus, emitter })],
    ['a plain EventEmitter2', () => { const plain = new EventEmitter2({ wildcard: false }); return { bus: new EventEmitterAgentBus(plain), emitter: plain }; }],
  ])('shows task topic subscribers on %s as its listeners', (_name, make: () => { bus: AgentBus; emitter: EventEmitter2 }) => {
    it('in listeners, hasListeners and eventNames, and emit reaches them', () => {
      const { bus, emitter } = make();
      const topic = 'agent.skill.answer.id.with.dots';
      const baseline = emitter.listenerCount();
      const got: string[] = [];
      const s = bus.topic$('answer', 'id.with.dots').subscribe((p) => got.push(p.text));
      const raw = (p: { text: string }): void => void got.push(`raw:${p.text}`);
      emitter.on(topic, raw);
      expect(emitter.listenerCount(topic)).toBe(2);
      expect(emitter.listeners(topic)).toHaveLength(2);
      expect(emitter.listeners(topic)).toContain(raw);
      expect(emitter.listeners()).toHaveLength(baseline + 2);
      expect(emitter.listenerCount()).toBe(baseline + 2);
      expect(emitter.hasListeners(topic)).toBe(true);
      expect(emitter.eventNames().filter((name) => name === topic)).toHaveLength(1);
      expect(emitter.emit(topic, { text: 'a', append: true, last: false })).toBe(true);
      bus.publish('answer', 'id.with.dots', { text: 'b', append: true, last: false });
      expect(got.sort()).toEqual(['a', 'b', 'raw:a', 'raw:b']);
      emitter.off(topic, raw);
      s.unsubscribe();
      expect(emitter.listenerCount(topic)).toBe(0);
      expect(emitter.hasListeners(topic)).toBe(false);
      expect(emitter.eventNames()).not.toContain(topic);
      emitter.emit(topic, { text: 'c', append: true, last: false });
      expect(got).toHaveLength(4);
      expect(emitter.listenerCount()).toBe(baseline);
    });

    it('listenTask adds one listener per task topic, delivers each to its handler, and removes them', () => {
      const { bus, emitter } = make();
      const baseline = bus.listenerCount();
      const got: string[] = [];
      const stop = bus.listenTask('lt', {
        progress: (p) => got.push(`progress:${p.text}`),
        toolframe: (p) => got.push(`toolframe:${p.frame.toolCallId}`),
        answer: (p) => got.push(`answer:${p.text}`),
        reply: (p) => got.push(`reply:${p.status}`),
      });
      expect(bus.listenerCount()).toBe(baseline + 4);
      for (const kind of ['progress', 'toolframe', 'answer', 'reply']) expect(emitter.listenerCount(`agent.skill.${kind}.lt`)).toBe(1);
      bus.publish('progress', 'lt', { text: 'p', step: 0 });
      bus.publish('toolframe', 'lt', { frame: { toolCallId: 'c1', name: 'n', phase: 'started' } } as never);
      bus.publish('answer', 'lt', { text: 'a', append: true, last: true });
      bus.publish('reply', 'lt', { status: 'completed', text: 'done' });
      bus.publish('reply', 'other', { status: 'completed', text: 'not mine' });
      expect(got).toEqual(['progress:p', 'toolframe:c1', 'answer:a', 'reply:completed']);
      stop();
      stop();
      expect(bus.listenerCount()).toBe(baseline);
      bus.publish('progress', 'lt', { text: 'late', step: 1 });
      expect(got).toHaveLength(4);
    });

    it("listenTask's removal takes away only its own four listeners when two bind one task", () => {
      const { bus, emitter } = make();
      const baseline = emitter.listenerCount();
      const got: string[] = [];
      const handlers = (tag: string) => ({
        progress: (p: { text: string }) => void got.push(`${tag}:progress:${p.text}`),
        toolframe: (p: { frame: { toolCallId: string } }) => void got.push(`${tag}:toolframe:${p.frame.toolCallId}`),
        answer: (p: { text: string }) => void got.push(`${tag}:answer:${p.text}`),
        reply: (p: { status: string }) => void got.push(`${tag}:reply:${p.status}`),
      });
      const stopFirst = bus.listenTask('two', handlers('first'));
      const stopSecond = bus.listenTask('two', handlers('second'));
      expect(emitter.listenerCount()).toBe(baseline + 8);
      stopFirst();
      expect(emitter.listenerCount()).toBe(baseline + 4);
      for (const kind of ['progress', 'toolframe', 'answer', 'reply']) expect(emitter.listenerCount(`agent.skill.${kind}.two`)).toBe(1);
      const publisher = bus.taskPublisher('two');
      publisher.publish('progress', { text: 'p', step: 0 });
      publisher.publish('toolframe', { frame: { toolCallId: 'c1', name: 'n', phase: 'started' } } as never);
      bus.publish('answer', 'two', { text: 'a', append: false, last: true });
      bus.publish('reply', 'two', { status: 'completed', text: 'done' });
      expect(got).toEqual(['second:progress:p', 'second:toolframe:c1', 'second:answer:a', 'second:reply:completed']);
      stopSecond();
      expect(emitter.listenerCount()).toBe(baseline);
    });

    it.each(['off', 'removeListener'] as const)('%s(topic, listener) removes a subscriber as it removes any listener', (method) => {
      const { bus, emitter } = make();
      const topic = 'agent.skill.toolframe.one-off';
      const baseline = emitter.listenerCount();
      const got: string[] = [];
      const stop = bus.listenTask('one-off', {
        progress: () => undefined,
        toolframe: (p) => got.push(p.frame.toolCallId),
        answer: () => undefined,
        reply: () => undefined,
      });
      const [subscriber] = emitter.listeners(topic);
      emitter[method](topic, subscriber);
      expect(emitter.listenerCount(topic)).toBe(0);
      expect(emitter.listenerCount()).toBe(baseline + 3);
      bus.publish('toolframe', 'one-off', { frame: { toolCallId: 'late', name: 'n', phase: 'started' } } as never);
      expect(got).toEqual([]);
      stop();
      expect(emitter.listenerCount()).toBe(baseline);
    });

    it('a task publisher delivers as publish does, whoever comes, goes or listens beside the subscribers', () => {
      const { bus, emitter } = make();
      const got: string[] = [];
      const publisher = bus.taskPublisher('tp');
      const say = (text: string): void => publisher.publish('progress', { text, step: 0 });
      say('before anyone');
      const handlers = (tag: string) => ({
        progress: (p: { text: string }) => void got.push(`${tag}:${p.text}`),
        toolframe: () => undefined,
        answer: () => undefined,
        reply: () => undefined,
      });
      const stop1 = bus.listenTask('tp', handlers('first'));
      say('a');
      stop1();
      say('nobody');
      // All left, then a new subscriber: the publisher finds it.
      const stop2 = bus.listenTask('tp', handlers('second'));
      say('b');
      // A raw listener and an onAny listener beside the subscribers hear it too, after them.
      const raw = (p: { text: string }): void => void got.push(`raw:${p.text}`);
      const any = (topic: string | string[]): void => void got.push(`any:${String(topic)}`);
      emitter.on('agent.skill.progress.tp', raw);
      emitter.onAny(any);
      say('c');
      emitter.off('agent.skill.progress.tp', raw);
      emitter.offAny(any);
      // Everyone removed at once, then a new subscriber.
      emitter.removeAllListeners();
      say('removed');
      const stop3 = bus.listenTask('tp', handlers('third'));
      say('d');
      publisher.publish('reply', { status: 'completed', text: 'done' });
      expect(got).toEqual(['first:a', 'second:b', 'second:c', 'raw:c', 'any:agent.skill.progress.tp', 'third:d']);
      stop2();
      stop3();
    });

    it('removeAllListeners(topic) removes them, and their unsubscribe after it changes nothing', async () => {
      const { bus, emitter } = make();
      const topic = 'agent.skill.progress.gone';
      const baseline = emitter.listenerCount();
      const got: string[] = [];
      const gone = bus.topic$('progress', 'gone').subscribe((p) => got.push(p.text));
      const other = bus.topic$('reply', 'gone').subscribe();
      emitter.removeAllListeners(topic);
      expect(emitter.listenerCount(topic)).toBe(0);
      bus.publish('progress', 'gone', { text: 'lost', step: 0 });
      expect(await emitter.emitAsync(topic, { text: 'lost too', step: 0 })).toEqual([]);
      gone.unsubscribe();
      expect(got).toEqual([]);
      expect(emitter.listenerCount('agent.skill.reply.gone')).toBe(1);
      expect(emitter.listenerCount()).toBe(baseline + 1);
      other.unsubscribe();
      expect(emitter.listenerCount()).toBe(baseline);
    });
  });
});
