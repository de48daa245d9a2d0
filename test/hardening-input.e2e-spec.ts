/**
 * Requests that try to slip something past the server: a valid credential carried beside an
 * invalid one, huge values that an error would echo, and method names that every JavaScript
 * object answers to.
 */
import { connect } from 'node:net';
import { manual } from './support/scripts';
import { startScriptedA2aApp, type ScriptedA2aApp } from './support/a2a-test-app';
import { rpc, wireMessage } from './support/sse';

const KEY = 'input-key-0a1b2c3d4e5f60718';
const OTHER_KEY = 'input-key-9f8e7d6c5b4a30291';
const TOKEN = 'input-token-1a2b3c4d5e6f70819';

/** Longest echo of a client's value in an error (with the "…" that marks a cut). */
const MAX_ECHO = 64;

/** A raw HTTP/1.1 exchange (fetch merges or refuses repeated headers): the status and body. */
function rawRequest(port: number, head: string, body: string | Buffer = '', chunked = false): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0);
      resolve({ status, body: received.slice(received.indexOf('\r\n\r\n') + 4) });
    });
    const bytes = Buffer.from(body);
    if (!chunked) socket.write(Buffer.concat([Buffer.from(`${head}Content-Length: ${bytes.length}\r\nConnection: close\r\n\r\n`), bytes]));
    else {
      // Two chunks: the body arrives split, as the application's parser path reads it.
      const half = Math.floor(bytes.length / 2);
      const chunk = (b: Buffer): Buffer[] => (b.length ? [Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')] : []);
      socket.write(
        Buffer.concat([
          Buffer.from(`${head}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n`),
          ...chunk(bytes.subarray(0, half)),
          ...chunk(bytes.subarray(half)),
          Buffer.from('0\r\n\r\n'),
        ]),
      );
    }
  });
}

/** The JSON object in a response body, whether it came with a Content-Length or chunked. */
function jsonIn(body: string): unknown {
  return JSON.parse(body.slice(body.indexOf('{'), body.lastIndexOf('}') + 1));
}

describe('input hardening (e2e)', () => {
  let server: ScriptedA2aApp;
  let port: number;

  beforeAll(async () => {
    server = await startScriptedA2aApp(manual, { auth: { apiKeys: [KEY, OTHER_KEY], bearerTokens: [TOKEN] } }, { bodyParser: false });
    port = Number(new URL(server.base).port);
  });
  afterAll(() => server.close());

  const list = (headers: Record<string, string>) => rpc(server.base, 'ListTasks', {}, { headers });

  describe('mixed credentials: any invalid one fails the request (401), whatever valid one it carries', () => {
    it.each([
      ['a valid key and a wrong bearer token', { 'x-api-key': KEY, authorization: 'Bearer not-the-token-0000000000' }],
      ['a valid bearer token and a wrong key', { 'x-api-key': 'not-a-key-00000000000000', authorization: `Bearer ${TOKEN}` }],
      ['a valid key and an Authorization of another scheme', { 'x-api-key': KEY, authorization: 'Basic dXNlcjpwYXNz' }],
      ['a valid token and an empty key header', { 'x-api-key': ' ', authorization: `Bearer ${TOKEN}` }],
    ])('%s: 401', async (_, headers) => {
      const response = await list(headers);
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ error: { code: -32000 } });
    });

    it('a valid key repeated with a wrong one, or two different valid keys (raw headers): 401', async () => {
      for (const extra of [`X-API-Key: ${KEY}\r\nX-API-Key: wrong-key-00000000000000\r\n`, `X-API-Key: ${KEY}\r\nX-API-Key: ${OTHER_KEY}\r\n`]) {
        const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} });
        const answer = await rawRequest(port, `POST /a2a HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nContent-Type: application/json\r\n${extra}`, body);
        expect(answer.status).toBe(401);
      }
      const twoTokens = await rawRequest(port, `GET /tasks HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nAuthorization: Bearer ${TOKEN}\r\nAuthorization: Bearer wrong-token-000000000000\r\n`);
      expect(twoTokens.status).toBe(401);
    });

    it('each valid credential alone still passes; a valid key and a valid token (two callers) do not', async () => {
      for (const headers of [{ 'x-api-key': KEY }, { 'x-api-key': OTHER_KEY }, { authorization: `Bearer ${TOKEN}` }] as Record<string, string>[]) {
        expect((await list(headers)).status).toBe(200);
      }
      const both = await list({ 'x-api-key': KEY, authorization: `Bearer ${TOKEN}` });
      expect(both.status).toBe(401);
      expect(((await both.json()) as { error: { message: string } }).error.message).toMatch(/^Credentials of more than one caller/);
    });
  });

  describe('every value an error echoes is cut to 64 characters, with "…"', () => {
    const huge = (c: string) => c.repeat(10_000);
    const auth = { 'x-api-key': KEY };

    /** No run of the filler longer than an echo may be, and the answer stays small. */
    function expectClipped(body: string, filler: string): void {
      expect(body).not.toContain(filler.repeat(MAX_ECHO));
      expect(body.length).toBeLessThan(2_000);
    }

    it('A2A-Version, task ids, method names, Last-Event-ID, contextId, output modes, media types, charsets', async () => {
      const answers: { what: string; body: string; filler: string; cut?: boolean }[] = [];
      const record = async (what: string, filler: string, response: Promise<Response>, cut = true) => answers.push({ what, filler, body: await (await response).text(), cut });

      await record('A2A-Version', 'v', rpc(server.base, 'GetTask', { id: 't' }, { version: huge('v'), headers: auth }));
      await record('A2A-Version (HTTP+JSON)', 'v', fetch(`${server.base}/tasks`, { headers: { ...auth, 'a2a-version': huge('v') } }));
      await record('task id (JSON-RPC 1.0)', 'i', rpc(server.base, 'GetTask', { id: huge('i') }, { headers: auth }));
      await record('task id (JSON-RPC 0.3)', 'i', rpc(server.base, 'tasks/get', { id: huge('i') }, { version: null, headers: auth }));
      await record('task id (HTTP+JSON)', 'i', fetch(`${server.base}/tasks/${huge('i')}`, { headers: { ...auth, 'a2a-version': '1.0' } }));
      await record('task id (cancel)', 'i', rpc(server.base, 'CancelTask', { id: huge('i') }, { headers: auth }));
      await record('method', 'm', rpc(server.base, huge('m'), {}, { headers: auth }));
      await record('message.taskId', 'i', rpc(server.base, 'SendMessage', { message: wireMessage('hi', { taskId: huge('i') }) }, { headers: auth }));
      await record('acceptedOutputModes', 'o', rpc(server.base, 'SendMessage', { message: wireMessage('hi'), configuration: { acceptedOutputModes: [huge('o')] } }, { headers: auth }));
      await record('file part mediaType', 't', rpc(server.base, 'SendMessage', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ raw: 'AAAA', mediaType: `x/${huge('t')}` }] } }, { headers: auth }));
      await record(
        'charset',
        'c',
        fetch(`${server.base}/a2a`, { method: 'POST', headers: { ...auth, 'a2a-version': '1.0', 'content-type': `application/json; charset=${huge('c')}` }, body: '{}' }),
      );
      await record('broken JSON', 'j', fetch(`${server.base}/a2a`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: `{"a":${huge('j')}` }));
      await record('undecodable task path', 'p', fetch(`${server.base}/tasks/%ZZ${huge('p')}`, { headers: { ...auth, 'a2a-version': '1.0' } }));

      // Last-Event-ID and a full conversation need a real task.
      const started = await rpc(server.base, 'SendMessage', { message: wireMessage('hi'), configuration: { returnImmediately: true } }, { headers: auth });
      const taskId = ((await started.json()) as { result: { task: { id: string } } }).result.task.id;
      await record('Last-Event-ID', 'l', rpc(server.base, 'SubscribeToTask', { id: taskId }, { headers: { ...auth, 'last-event-id': huge('l') } }));
      await record('Last-Event-ID (HTTP+JSON)', 'l', fetch(`${server.base}/tasks/${taskId}:subscribe`, { method: 'POST', headers: { ...auth, 'a2a-version': '1.0', 'last-event-id': huge('l') } }));

      for (const { what, body, filler } of answers) {
        try {
          expect(body).toMatch(/error/);
          expectClipped(body, filler);
        } catch (err) {
          throw new Error(`${what}: ${(err as Error).message}\n${body.slice(0, 400)}`);
        }
      }
      // The cut is visible, and what is kept is 64 characters with the mark.
      const version = JSON.parse(answers[0].body) as { error: { message: string } };
      expect(version.error.message).toContain(`"${'v'.repeat(MAX_ECHO - 1)}…"`);
      const taskNotFound = JSON.parse(answers[2].body) as { error: { message: string; data: { metadata: { taskId: string } }[] } };
      expect(taskNotFound.error.message).toBe(`Task ${'i'.repeat(MAX_ECHO - 1)}… not found`);
      expect(taskNotFound.error.data[0].metadata.taskId).toBe(`${'i'.repeat(MAX_ECHO - 1)}…`);
    });

    it('short values are echoed whole', async () => {
      const response = await rpc(server.base, 'GetTask', { id: 'no-such-task' }, { headers: auth });
      expect(((await response.json()) as { error: { message: string } }).error.message).toBe('Task no-such-task not found');
    });
  });

  describe('a body read by the fast path (declared length, UTF-8) is answered as the parser answers it (chunked)', () => {
    const list = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ListTasks', params: {} });
    it.each([
      ['valid JSON', list],
      ['valid JSON after a byte order mark', `\uFEFF${list}`],
      ['malformed JSON', '{"jsonrpc": "2.0", "id": 1,'],
      ['an empty body', ''],
      ['a JSON scalar', '42'],
      ['JSON nested past maxJsonDepth', `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":${'['.repeat(200)}${']'.repeat(200)}}`],
      ['invalid UTF-8 inside a string', Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","method":"ListTasks","params":{}}')])],
    ])('%s', async (_, body) => {
      for (const type of ['application/json', 'application/a2a+json; charset=utf-8']) {
        const head = `POST /a2a HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\nX-API-Key: ${KEY}\r\nContent-Type: ${type}\r\n`;
        const fast = await rawRequest(port, head, body);
        const parsed = await rawRequest(port, head, body, true);
        expect(fast.status).toBe(parsed.status);
        // The parser's answer is chunked on the wire; compare the JSON inside.
        expect(jsonIn(fast.body)).toEqual(jsonIn(parsed.body));
      }
    });
  });

  describe('the "other protocol version" hint only for real A2A method names', () => {
    const auth = { 'x-api-key': KEY };
    const INHERITED = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', '__defineGetter__', 'toLocaleString'];

    it.each([
      ['1.0', '1.0'],
      ['0.3', null],
    ])('A2A %s: names every object inherits are plain "Method not found"', async (_, version) => {
      for (const method of INHERITED) {
        const response = await rpc(server.base, method, {}, { version, headers: auth });
        expect(await response.json()).toMatchObject({ error: { code: -32601, message: `Method not found: ${method}` } });
      }
    });

    it('real method names of the other version still get the hint', async () => {
      const v03 = await rpc(server.base, 'message/send', {}, { headers: auth });
      expect(((await v03.json()) as { error: { message: string } }).error.message).toContain('an A2A 0.3 method');
      const v10 = await rpc(server.base, 'SendMessage', {}, { version: null, headers: auth });
      expect(((await v10.json()) as { error: { message: string } }).error.message).toContain('an A2A 1.0 method');
    });
  });
});
