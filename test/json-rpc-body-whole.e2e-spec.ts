/**
 * A JSON-RPC request whose body comes with its headers (one write, as Node's client sends a small
 * body ended with the request) is read whole from the request's buffer: no body deadline, no
 * 'data' listeners. That rests on Nest's route running the handler after at least one await
 * (today its param pipes' for `@Res()`): the HTTP parser pushes the body into the request only
 * after the headers' callback returns, so a handler run synchronously from it finds the buffer
 * empty and every request takes the slower read (a timer, three ticks and ~1.7 KB more per
 * empty task, measured in round 32 with a Nest whose pipes step does not await). If Nest ever
 * runs this route synchronously, this fails and the handler has to wait for the body itself.
 */
import { request } from 'node:http';
import { BodyDeadlines } from '../src/a2a/a2a-json-body.middleware';
import { startScriptedA2aApp, type ScriptedA2aApp } from './support/a2a-test-app';
import { wireMessage } from './support/sse';

/** One POST whose headers and body leave in one write; resolves with the status and the whole response. */
function post(url: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', 'content-length': Buffer.byteLength(body) },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.end(body);
  });
}

describe('the JSON-RPC body, received with its headers, is read whole (e2e)', () => {
  let t: ScriptedA2aApp;

  beforeAll(async () => {
    // As src/main.ts boots it: no application-wide JSON parser reads the body first.
    t = await startScriptedA2aApp((run) => run.reply('done'), {}, { bodyParser: false });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('without a body deadline, for a streaming send and a unary call', async () => {
    const deadlines = jest.spyOn(BodyDeadlines.prototype, 'add');
    try {
      const streamed = await post(`${t.base}/a2a`, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendStreamingMessage', params: { message: wireMessage('hello') } }));
      expect(streamed.status).toBe(200);
      expect(streamed.text).toContain('TASK_STATE_COMPLETED');
      const unary = await post(`${t.base}/a2a`, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: 'missing' } }));
      expect(JSON.parse(unary.text)).toMatchObject({ jsonrpc: '2.0', id: 2, error: { code: -32001 } });
      expect(deadlines).not.toHaveBeenCalled();
    } finally {
      deadlines.mockRestore();
    }
  });
});
