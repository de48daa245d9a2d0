import { AIMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { assignToolCallIds, createToolAgent, toolCallIdsIn } from './tool-agent';
import { ToolTimeoutError, withJsonSafeResult, withToolTimeout } from './tool-guards';

const message = (ids: Array<string | undefined>): AIMessage =>
  new AIMessage({ content: '', tool_calls: ids.map((id, i) => ({ id, name: `t${i}`, args: {}, type: 'tool_call' as const })) });

describe('assignToolCallIds', () => {
  let n = 0;
  const next = (): string => `new_${++n}`;
  beforeEach(() => (n = 0));

  it('fills missing and empty ids and replaces duplicates, keeping good ones', () => {
    const out = assignToolCallIds(message(['a', undefined, '', 'a', 'b']), next);
    expect(out.tool_calls?.map((c) => c.id)).toEqual(['a', 'new_1', 'new_2', 'new_3', 'b']);
  });

  it('replaces ids used earlier in the run', () => {
    const earlier = toolCallIdsIn([message(['call_0', 'call_1']), new AIMessage('text only')]);
    expect([...earlier]).toEqual(['call_0', 'call_1']);
    const out = assignToolCallIds(message(['call_0', 'call_2', 'call_1']), next, earlier);
    expect(out.tool_calls?.map((c) => c.id)).toEqual(['new_1', 'call_2', 'new_2']);
  });

  it('leaves a message with good ids untouched', () => {
    const original = message(['a', 'b']);
    const calls = original.tool_calls;
    expect(assignToolCallIds(original, next).tool_calls).toBe(calls);
    expect(assignToolCallIds(new AIMessage('no tools'), next).tool_calls).toEqual([]);
  });

  it('makes call_<uuid> ids by default', () => {
    const out = assignToolCallIds(message([undefined, undefined]));
    const ids = out.tool_calls?.map((c) => c.id) ?? [];
    expect(ids[0]).toMatch(/^call_[0-9a-f-]{36}$/);
    expect(new Set(ids).size).toBe(2);
  });
});

describe('createToolAgent', () => {
  it('refuses a model that cannot bind tools, saying so', () => {
    const model = { getName: () => 'Plain', bindTools: undefined } as unknown as BaseChatModel;
    expect(() => createToolAgent(model, [])).toThrow('ExecutorModule: the chat model Plain does not support bindTools(), so it cannot call tools');
  });
});

describe('withToolTimeout', () => {
  it('fails a tool that never settles with "timed out after N ms" and aborts its signal', async () => {
    let seen: AbortSignal | undefined;
    const hang = tool(
      (_input, config) => {
        seen = config.signal;
        return new Promise<string>(() => undefined);
      },
      { name: 'hang', description: 'never answers', schema: z.object({}) },
    );
    const bounded = withToolTimeout(hang, 50);
    expect(bounded.name).toBe('hang');
    await expect(bounded.invoke({})).rejects.toThrow(new ToolTimeoutError(50).message);
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toBeInstanceOf(ToolTimeoutError);
  });

  it('passes results, thrown errors and the caller\'s abort through', async () => {
    const echo = withToolTimeout(tool(({ x }) => x * 2, { name: 'double', description: 'x2', schema: z.object({ x: z.number() }) }), 1000);
    expect(await echo.invoke({ x: 21 })).toBe(42);
    const sync = withToolTimeout(
      tool(
        (): string => {
          throw new Error('thrown at once');
        },
        { name: 'sync', description: 'throws', schema: z.object({}) },
      ),
      1000,
    );
    await expect(sync.invoke({})).rejects.toThrow('thrown at once');
    let seen: AbortSignal | undefined;
    const waiting = withToolTimeout(
      tool(
        (_i, config) => {
          seen = config.signal;
          return new Promise<string>((_, reject) => config.signal?.addEventListener('abort', () => reject(new Error('stopped'))));
        },
        { name: 'wait', description: 'waits', schema: z.object({}) },
      ),
      10_000,
    );
    const controller = new AbortController();
    const pending = waiting.invoke({}, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('cancelled')), 20);
    await expect(pending).rejects.toThrow();
    expect(seen?.aborted).toBe(true);
  });

  it('leaves the original tool unbounded', async () => {
    const original = tool(() => new Promise<string>((r) => setTimeout(() => r('late'), 80)), { name: 'late', description: 'late', schema: z.object({}) });
    withToolTimeout(original, 10);
    expect(await original.invoke({})).toBe('late');
  });
});

describe('withJsonSafeResult', () => {
  const returning = (value: unknown) => tool(() => value as string, { name: 'r', description: 'returns a value', schema: z.object({}) });
  const asMessage = (value: unknown) => withJsonSafeResult(returning(value)).invoke({ id: 'c1', name: 'r', args: {}, type: 'tool_call' });

  it('turns what JSON cannot take into plain data the model and the frames can read', async () => {
    const cyclic: Record<string, unknown> = { name: 'root', total: 10n };
    cyclic.self = cyclic;
    expect((await asMessage(cyclic)).content).toBe('{"name":"root","total":"10","self":"[circular]"}');
    expect((await asMessage(2n ** 70n)).content).toBe('1180591620717411303424');
  });

  it('turns what JSON would empty (Map, Set, Error) into plain data too, at any depth', async () => {
    const value = { tags: new Map([['a', 1]]), seen: new Set(['x']), last: new Error('nope'), plain: [1] };
    expect(JSON.parse((await asMessage(value)).content as string)).toEqual({ tags: { a: 1 }, seen: ['x'], last: 'nope', plain: [1] });
  });

  it('leaves values JSON takes exactly as they are', async () => {
    const value = { a: [1, 'two'], when: new Date(0) };
    expect(await withJsonSafeResult(returning(value)).invoke({})).toBe(value);
    expect(await withJsonSafeResult(returning('text')).invoke({})).toBe('text');
  });

  it('leaves content_and_artifact tools alone', () => {
    const t = tool(() => ['c', { raw: 1n }] as [string, unknown], { name: 'ca', description: 'x', schema: z.object({}), responseFormat: 'content_and_artifact' });
    expect(withJsonSafeResult(t)).toBe(t);
  });
});
