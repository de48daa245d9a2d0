import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { createDemoTools } from '../tools/demo-tools';
import type { ToolOutcome } from '../../executor/models/offline-chat-model';
import { composeAnswer, PLANNER_HELP } from './planner-answer';
import { PlannerChatModel } from './planner-chat-model';
import { planToolCalls, splitClauses } from './planner-plan';

const ALL = new Set(['weather', 'world_clock', 'calculator', 'search_docs', 'read_doc', 'slow_task']);

describe('planToolCalls', () => {
  it.each([
    ['weather in Paris and the time in Tokyo', [{ name: 'weather', args: { city: 'Paris' } }, { name: 'world_clock', args: { place: 'Tokyo' } }]],
    ["what's 12*7", [{ name: 'calculator', args: { expression: '12*7' } }]],
    ['what is 12 times 7 plus 1?', [{ name: 'calculator', args: { expression: '12 * 7 + 1' } }]],
    ['what is the square root of 144', [{ name: 'calculator', args: { expression: 'sqrt(144)' } }]],
    ['search the docs for replay', [{ name: 'search_docs', args: { query: 'replay' } }]],
    ['take a slow step of 800 ms', [{ name: 'slow_task', args: { ms: 800 } }]],
    ['wait 2 seconds', [{ name: 'slow_task', args: { ms: 2000 } }]],
    ['read the doc missing-page', [{ name: 'read_doc', args: { id: 'missing-page' } }]],
    ['what time is it in Europe/Berlin?', [{ name: 'world_clock', args: { place: 'Europe/Berlin' } }]],
    [
      "What's the weather in New York, London and Tokyo?",
      [
        { name: 'weather', args: { city: 'New York' } },
        { name: 'weather', args: { city: 'London' } },
        { name: 'weather', args: { city: 'Tokyo' } },
      ],
    ],
    ['calculate max(1, 2) + 3 and then 10 divided by 4', [{ name: 'calculator', args: { expression: 'max(1, 2) + 3' } }, { name: 'calculator', args: { expression: '10 / 4' } }]],
    ['weather in Atlantis', [{ name: 'weather', args: { city: 'Atlantis' } }]],
    ['hello there', []],
    ['tell me about 5 cats', []],
  ])('%s', (request, calls) => {
    expect(planToolCalls(request, ALL)).toEqual(calls);
  });

  it('plans only the tools that are available', () => {
    expect(planToolCalls('weather in Paris and the time in Tokyo', new Set(['world_clock']))).toEqual([{ name: 'world_clock', args: { place: 'Tokyo' } }]);
    expect(planToolCalls("what's 2+2", new Set())).toEqual([]);
  });

  it('never splits inside parentheses', () => {
    expect(splitClauses('max(1, 2) and min(3, 4)')).toEqual(['max(1, 2)', 'min(3, 4)']);
  });
});

describe('composeAnswer', () => {
  const ok = (name: string, args: Record<string, unknown>, value: unknown): ToolOutcome => ({ toolCallId: 'c', name, args, ok: true, value });
  const failed = (name: string, args: Record<string, unknown>, error: string): ToolOutcome => ({ toolCallId: 'c', name, args, ok: false, error });

  it('writes one sentence per result, failures included', () => {
    const answer = composeAnswer([
      ok('weather', { city: 'Paris' }, { city: 'Paris', condition: 'sunny', temperatureC: 20, humidityPercent: 40, windKph: 5 }),
      ok('calculator', { expression: '12*7' }, { expression: '12*7', value: 84 }),
      failed('read_doc', { id: 'missing-page' }, 'no document named "missing-page".'),
      ok('search_docs', { query: 'zzz' }, { query: 'zzz', results: [] }),
      ok('custom', {}, 'plain text'),
    ]);
    expect(answer).toBe(
      'Paris: sunny, 20 °C (humidity 40%, wind 5 km/h). 12*7 = 84. I could not read the doc "missing-page": no document named "missing-page". ' +
        'Nothing in the docs matches "zzz". custom: plain text.',
    );
  });

  it('offers help when there is nothing to answer from', () => {
    expect(composeAnswer([])).toBe(PLANNER_HELP);
  });
});

describe('PlannerChatModel', () => {
  const model = new PlannerChatModel().bindTools(createDemoTools());

  it('turns a request into parallel tool calls with ids unique in the conversation', async () => {
    const reply = await model.invoke([new HumanMessage('weather in Paris and the time in Tokyo')]);
    expect(reply.tool_calls).toEqual([
      { id: 'call_1_0', name: 'weather', args: { city: 'Paris' }, type: 'tool_call' },
      { id: 'call_1_1', name: 'world_clock', args: { place: 'Tokyo' }, type: 'tool_call' },
    ]);
  });

  it('answers from the tool results once they are in', async () => {
    const reply = await model.invoke([
      new HumanMessage("what's 12*7 and read the doc nope"),
      new AIMessage({
        content: '',
        tool_calls: [
          { id: 'a', name: 'calculator', args: { expression: '12*7' }, type: 'tool_call' },
          { id: 'b', name: 'read_doc', args: { id: 'nope' }, type: 'tool_call' },
        ],
      }),
      new ToolMessage({ tool_call_id: 'a', content: '{"expression":"12*7","value":84}' }),
      new ToolMessage({ tool_call_id: 'b', content: 'Error: no document named "nope"\n Please fix your mistakes.', status: 'error' }),
    ]);
    expect(reply.tool_calls).toEqual([]);
    expect(reply.text).toBe('12*7 = 84. I could not read the doc "nope": no document named "nope".');
  });

  it('answers with help when the request names nothing it can do', async () => {
    expect((await model.invoke([new HumanMessage('hello')])).text).toBe(PLANNER_HELP);
  });

  it('calls no tool that was not bound', async () => {
    const reply = await new PlannerChatModel().invoke([new HumanMessage('weather in Paris')]);
    expect(reply.tool_calls).toEqual([]);
  });

  it('gives up its simulated latency when aborted', async () => {
    const slow = new PlannerChatModel({ latencyMs: 10_000 });
    await expect(slow.invoke([new HumanMessage('hi')], { signal: AbortSignal.abort(new Error('stop')) })).rejects.toThrow();
  });
});
