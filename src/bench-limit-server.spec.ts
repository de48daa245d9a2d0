/**
 * The bench's limit (bench/servers/limit-server.ts) must write what toolstream writes for the
 * same scripted run, in its least form: the same events in the same order, each tool frame, the
 * run's narration and its answer. Both servers run in this process on free loopback ports and
 * answer one A2A request each; their SSE events are compared by what a client reads of them.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { scenarioText, SCENARIO_ANSWER, SCENARIO_NARRATION, type Scenario } from '../bench/lib/scenario';
import { createLimitServer } from '../bench/servers/limit-server';
import { createToolstreamServer } from '../bench/servers/toolstream-server';
import { collect, dataOf } from '../test/support/sse';
import { TOOL_CALL_V1_EXTENSION_URI } from './extensions';

type Result = Record<string, { status?: { state: string; message?: { parts: Array<{ text?: string }> } }; artifact?: { name: string; parts: Array<{ text?: string; data?: { phase?: string } }> } }>;

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** What a client that activates tool-call-v1 (as the load generator does) reads of each event: its kind, then the state and narration, the artifact's name and frame phase or text. */
async function clientView(url: string, scenario: Scenario): Promise<string[]> {
  const body = { jsonrpc: '2.0', id: 1, method: 'SendStreamingMessage', params: { message: { messageId: `m-${scenario.toolCalls}`, role: 'ROLE_USER', parts: [{ text: scenarioText(scenario) }] } } };
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'a2a-extensions': TOOL_CALL_V1_EXTENSION_URI }, body: JSON.stringify(body) });
  return (await collect(res)).map((message) => {
    const [kind, event] = Object.entries((dataOf(message) as { result: Result }).result)[0];
    const narration = event.status?.message?.parts.map((p) => p.text).join('');
    const part = event.artifact?.parts[0];
    return [kind, event.status?.state, narration, event.artifact?.name, part?.data?.phase ?? part?.text].filter((x) => x !== undefined).join(' ');
  });
}

describe('the bench limit', () => {
  const closes: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const close of closes) await close();
  });

  it('writes the events toolstream writes for the same run: frames, narration and answer', async () => {
    const limit = createLimitServer();
    closes.push(() => new Promise((resolve) => limit.close(resolve)));
    const toolstream = await createToolstreamServer();
    closes.push(toolstream.close ?? (() => new Promise((resolve) => toolstream.server.close(resolve))));
    const limitUrl = await listen(limit);
    const toolstreamUrl = `${await listen(toolstream.server)}${toolstream.rpcPath === '/' ? '' : toolstream.rpcPath}`;
    for (const toolCalls of [0, 2]) {
      const scenario: Scenario = { toolCalls, intervalMs: 0, idle: false };
      const ours = await clientView(toolstreamUrl, scenario);
      expect(await clientView(limitUrl, scenario)).toEqual(ours);
      expect(ours[1]).toBe(`statusUpdate TASK_STATE_WORKING ${SCENARIO_NARRATION}`);
      expect(ours.at(-2)).toBe(`artifactUpdate answer ${SCENARIO_ANSWER}`);
      expect(ours).toHaveLength(4 + 2 * toolCalls);
    }
  }, 30_000);
});
