import { tool } from '@langchain/core/tools';
import { Test } from '@nestjs/testing';
import { z } from 'zod';
import { sleep } from './abortable';
import { CANCELLED } from './agent-run';
import { ExecutorModule } from './executor.module';
import type { ExecutorModuleOptions } from './executor-module-options';
import { AgentExecutor } from './executor.types';
import { eventually, record, runLines as lines, runToEnd } from './fixtures/run-recorder';
import { forwardingChannel, FORWARDED_CHUNK, isForwardedChunk } from './forwarding';
import { ScriptedChatModel } from './models/scripted-chat-model';

async function executorWith(options: ExecutorModuleOptions): Promise<AgentExecutor> {
  const moduleRef = await Test.createTestingModule({ imports: [ExecutorModule.forRoot(options)] }).compile();
  return moduleRef.get(AgentExecutor);
}

/** A tool that stands in for a delegating call: forwards two frames and a line, then answers. */
const delegating = tool(
  async ({ question }, config) => {
    const channel = forwardingChannel(config);
    if (!channel) throw new Error('no forwarding channel');
    channel.narration('researcher: checking the weather');
    channel.frame({ toolCallId: 'call_1', name: 'weather', phase: 'started', args: { city: 'Oslo' } });
    channel.frame({ toolCallId: 'call_1', name: 'weather', phase: 'bogus' });
    await sleep(5);
    channel.frame({ toolCallId: 'call_1', name: 'weather', phase: 'completed', result: { tempC: 3 } });
    return `3 °C in Oslo (${question})`;
  },
  { name: 'researcher', description: 'asks the researcher', schema: z.object({ question: z.string() }) },
);

describe('forwarding another agent\'s work into the run (LangGraph custom stream)', () => {
  it('reaches the run through the tool\'s config, past the time budget and JSON guards', async () => {
    const model = new ScriptedChatModel({
      turns: [{ toolCalls: [{ name: 'researcher', id: 'd1', args: { question: 'weather in Oslo' } }] }, { text: 'It is 3 °C in Oslo.' }],
    });
    const executor = await executorWith({ model, tools: [delegating], toolTimeoutMs: 5_000 });
    const events = await runToEnd(executor.run('ask researcher: weather in Oslo', { correlationId: 't1' }));
    expect(lines(events)).toEqual([
      'say thinking',
      'say running researcher',
      'started d1',
      'say researcher: checking the weather',
      'started d1/call_1 < d1',
      'completed d1/call_1 < d1',
      'completed d1',
      'reply It is 3 °C in Oslo.',
    ]);
  });

  it('hands the tools the request metadata in configurable.requestMetadata', async () => {
    let seen: unknown;
    const reader = tool(
      (_input, config) => {
        seen = config.configurable?.requestMetadata;
        return 'ok';
      },
      { name: 'reader', description: 'reads', schema: z.object({}) },
    );
    const model = new ScriptedChatModel({ turns: [{ toolCalls: [{ name: 'reader', id: 'r' }] }, { text: 'done' }] });
    const executor = await executorWith({ model, tools: [reader] });
    await runToEnd(executor.run('go', { correlationId: 't2', metadata: { depth: 2 } }));
    expect(seen).toEqual({ depth: 2 });
  });

  it('cancel ends the forwarded calls still open as cancelled, before the delegating call', async () => {
    const waiting = tool(
      async (_input, config) => {
        forwardingChannel(config)?.frame({ toolCallId: 'call_1', name: 'slow_task', phase: 'started' });
        await sleep(60_000, config.signal);
        return 'never';
      },
      { name: 'researcher', description: 'waits', schema: z.object({}) },
    );
    const model = new ScriptedChatModel({ turns: [{ toolCalls: [{ name: 'researcher', id: 'd1' }] }, { text: 'never' }] });
    const executor = await executorWith({ model, tools: [waiting] });
    const abort = new AbortController();
    const rec = record(executor.run('go', { correlationId: 't3', signal: abort.signal }));
    await eventually(() => lines(rec.events).includes('started d1/call_1 < d1'));
    abort.abort();
    await rec.done;
    expect(lines(rec.events).slice(-2)).toEqual([`failed d1/call_1 < d1: ${CANCELLED}`, `failed d1: ${CANCELLED}`]);
  });

  it('has no channel outside a streamed graph, and recognises only its own chunks', () => {
    expect(forwardingChannel(undefined)).toBeUndefined();
    expect(forwardingChannel({ toolCall: { id: 'x' } })).toBeUndefined();
    expect(forwardingChannel({ writer: () => undefined })).toBeUndefined();
    expect(isForwardedChunk({ kind: FORWARDED_CHUNK, callId: 'x', narration: 'n' })).toBe(true);
    expect(isForwardedChunk({ kind: 'other', callId: 'x' })).toBe(false);
    expect(isForwardedChunk('text')).toBe(false);
  });
});
