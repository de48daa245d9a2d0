/**
 * Observability of the built demo app (`node dist/main.js`) as operators see it: traces exported
 * over OTLP/HTTP (http/json) to a local receiver, continuing the caller's W3C traceparent;
 * Prometheus metrics after known work; the health probes.
 */
import { randomBytes } from 'node:crypto';
import { buildOnce, startBuiltServer, type BuiltServer } from './support/built-server';
import { OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver';
import { readSse } from './support/sse';

const hex = (bytes: number): string => randomBytes(bytes).toString('hex');

async function eventually<T>(read: () => T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Sends one streaming message and reads its stream to the end; returns the task id and the events. */
async function streamMessage(base: string, text: string, headers: Record<string, string> = {}): Promise<{ taskId: string; events: unknown[] }> {
  const response = await fetch(`${base}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendStreamingMessage',
      params: { message: { messageId: `m-${hex(4)}`, role: 'ROLE_USER', parts: [{ text }] } },
    }),
  });
  expect(response.status).toBe(200);
  const events: unknown[] = [];
  for await (const message of readSse(response)) if (message.data) events.push(JSON.parse(message.data));
  const first = events[0] as { result: { task: { id: string } } };
  return { taskId: first.result.task.id, events };
}

/** The value of one sample line of the exposition (`name{labels} value`). */
function sample(exposition: string, series: string): number | undefined {
  const line = exposition.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('observability of the built server (e2e)', () => {
  const receiver = new OtlpReceiver();
  let server: BuiltServer;

  beforeAll(async () => {
    await buildOnce();
    const endpoint = await receiver.start();
    server = await startBuiltServer({
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'toolstream-e2e',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    });
  }, 240_000);

  afterAll(async () => {
    await server?.stop();
    await receiver.stop();
    // SIGTERM flushes the SDK and exits 0.
    expect((await server?.exited)?.code).toBe(0);
  });

  it('one trace from the caller: invoke_agent under its span, execute_tool and chat spans under that, error status on the failing tool', async () => {
    const traceId = hex(16);
    const callerSpanId = hex(8);
    const { taskId } = await streamMessage(server.base, 'weather in Paris and read the doc missing-page', {
      traceparent: `00-${traceId}-${callerSpanId}-01`,
    });

    // The task span ends last; once it is there, the run's spans are too (same batch or earlier).
    const agent = await eventually(() => receiver.trace(traceId).find((s) => s.name.startsWith('invoke_agent')), 'the invoke_agent span');
    const spans = await eventually(() => {
      const found = receiver.trace(traceId);
      return found.filter((s) => s.name.startsWith('execute_tool')).length === 2 && found.some((s) => s.name.startsWith('chat')) ? found : undefined;
    }, 'the tool and model spans');

    expect(agent).toMatchObject({
      name: 'invoke_agent toolstream demo agent',
      parentSpanId: callerSpanId,
      scope: 'toolstream',
      statusCode: 0,
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'toolstream demo agent',
        'a2a.task.id': taskId,
        'a2a.task.state': 'TASK_STATE_COMPLETED',
      },
    });
    expect(agent.resource['service.name']).toBe('toolstream-e2e');

    const byName = (name: string): ReceivedSpan => {
      const matching = spans.filter((s) => s.name === name);
      expect(matching).toHaveLength(1);
      return matching[0];
    };
    const weather = byName('execute_tool weather');
    expect(weather).toMatchObject({
      parentSpanId: agent.spanId,
      statusCode: 0,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'weather',
        'gen_ai.tool.call.id': expect.stringMatching(/.+/),
        'a2a.task.id': taskId,
      },
    });
    const readDoc = byName('execute_tool read_doc');
    expect(readDoc).toMatchObject({
      parentSpanId: agent.spanId,
      statusCode: 2,
      statusMessage: expect.stringContaining('no document named "missing-page"'),
      attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'read_doc', 'a2a.task.id': taskId },
    });
    expect(readDoc.attributes['gen_ai.tool.call.id']).not.toBe(weather.attributes['gen_ai.tool.call.id']);

    // Two model turns: the one asking for both tools, the one answering.
    const chats = spans.filter((s) => s.name.startsWith('chat '));
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(chat).toMatchObject({ parentSpanId: agent.spanId, attributes: { 'gen_ai.operation.name': 'chat', 'a2a.task.id': taskId } });
    }
    expect(receiver.rejected).toEqual([]);
  });

  it('a request without traceparent starts its own trace, with the task span at its root', async () => {
    const { taskId } = await streamMessage(server.base, "what's 12*7");
    const agent = await eventually(
      () => receiver.spans.find((s) => s.name.startsWith('invoke_agent') && s.attributes['a2a.task.id'] === taskId),
      'the invoke_agent span',
    );
    expect(agent.parentSpanId).toBe('');
    const tool = await eventually(() => receiver.trace(agent.traceId).find((s) => s.name === 'execute_tool calculator'), 'the calculator span');
    expect(tool.parentSpanId).toBe(agent.spanId);
  });

  it('GET /metrics counts the work done, in Prometheus text', async () => {
    // The two tasks above: weather completed, read_doc failed, calculator completed.
    const response = await fetch(`${server.base}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    expect(sample(text, 'toolstream_tool_calls_total{tool="weather",outcome="completed"}')).toBe(1);
    expect(sample(text, 'toolstream_tool_calls_total{tool="read_doc",outcome="failed"}')).toBe(1);
    expect(sample(text, 'toolstream_tool_calls_total{tool="calculator",outcome="completed"}')).toBe(1);
    expect(sample(text, 'toolstream_tool_calls_total{tool="weather",outcome="failed"}')).toBe(0);
    expect(sample(text, 'toolstream_tool_call_duration_seconds_count{tool="weather",outcome="completed"}')).toBe(1);
    expect(sample(text, 'toolstream_tool_call_duration_seconds_bucket{le="+Inf",tool="read_doc",outcome="failed"}')).toBe(1);
    expect(sample(text, 'toolstream_tool_call_duration_seconds_sum{tool="weather",outcome="completed"}')).toBeGreaterThan(0);
    expect(sample(text, 'toolstream_tasks_total{state="completed"}')).toBe(2);
    expect(sample(text, 'toolstream_tasks_total{state="failed"}')).toBe(0);
    // started + terminal frame per tool call
    expect(sample(text, 'toolstream_frames_total')).toBe(6);
    expect(sample(text, 'toolstream_rejected_frames_total')).toBe(0);
    expect(sample(text, 'toolstream_open_streams')).toBe(0);
    expect(sample(text, 'toolstream_live_tasks')).toBe(0);
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(text).toContain('nodejs_eventloop_lag_seconds');
    // No id ever becomes a label.
    expect(text).not.toMatch(/="call_|="[0-9a-f]{8}-[0-9a-f]{4}-/);
  });

  it('/healthz (readiness) and /healthz/live answer 200 through terminus', async () => {
    const ready = await fetch(`${server.base}/healthz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ok', info: { a2a: { status: 'up', draining: false }, process: { status: 'up' } } });
    const live = await fetch(`${server.base}/healthz/live`);
    expect(live.status).toBe(200);
    expect(await live.json()).toMatchObject({ status: 'ok', info: { process: { status: 'up' } } });
  });
});
