import { get } from 'node:http';
import { Logger } from '@nestjs/common';
import { A2aPreRouteErrors } from '../src/a2a/pre-route-errors';
import { startScriptedA2aApp, type ScriptedA2aApp } from './support/a2a-test-app';
import { parallelWeatherAndClock } from './support/scripts';
import { collect, rpc, wireMessage } from './support/sse';

interface RpcError {
  code: number;
  message: string;
  data?: { '@type': string; reason?: string; fieldViolations?: { field: string; description: string }[] }[];
}

async function rpcError(response: Response): Promise<{ id: unknown; error: RpcError }> {
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('application/json');
  const text = await response.text();
  expect(text).not.toMatch(/\bat .*\(.*:\d+:\d+\)/); // no stack trace
  return JSON.parse(text) as { id: unknown; error: RpcError };
}

const post = (base: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${base}/a2a`, { method: 'POST', body, headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers } });

describe('errors (e2e): every code, never a 500 nor a stack', () => {
  let t: ScriptedA2aApp;
  let finishedTaskId: string;

  beforeAll(async () => {
    t = await startScriptedA2aApp(parallelWeatherAndClock);
    const events = await collect(await rpc(t.base, 'SendStreamingMessage', { message: wireMessage('weather') }));
    finishedTaskId = (JSON.parse(events[0].data!) as { result: { task: { id: string } } }).result.task.id;
  });
  afterAll(async () => {
    await t.close();
  });

  describe('JSON-RPC', () => {
    it.each([
      ['malformed JSON', '{"jsonrpc":"2.0",', 'application/json'],
      ['malformed application/a2a+json', '{oops', 'application/a2a+json'],
      ['a JSON string', '"SendMessage"', 'application/json'],
    ])('-32700 for %s', async (_name, body, type) => {
      const { id, error } = await rpcError(await post(t.base, body, { 'content-type': type }));
      expect(id).toBeNull();
      expect(error.code).toBe(-32700);
      expect(error.message).toMatch(/^Invalid JSON payload: /);
    });

    it.each([
      ['a non-object body', '[]', 'batch requests are not supported'],
      ['a wrong jsonrpc version', '{"jsonrpc":"1.0","id":1,"method":"GetTask"}', '"jsonrpc" must be "2.0"'],
      ['a notification (no id)', '{"jsonrpc":"2.0","method":"GetTask"}', '"id" is required'],
      ['an object id', '{"jsonrpc":"2.0","id":{},"method":"GetTask"}', '"id" must be a string, a number or null'],
      ['a missing method', '{"jsonrpc":"2.0","id":1}', '"method" must be a non-empty string'],
    ])('-32600 for %s', async (_name, body, message) => {
      const { error } = await rpcError(await post(t.base, body));
      expect(error.code).toBe(-32600);
      expect(error.message).toContain(message);
    });

    it('-32600 for a JSON scalar sent as application/a2a+json (the strict application/json parser says -32700)', async () => {
      const { error } = await rpcError(await post(t.base, '42', { 'content-type': 'application/a2a+json' }));
      expect(error.code).toBe(-32600);
      expect(error.message).toContain('the body must be a JSON object');
    });

    it('-32600 for a body sent as text/plain (not parsed as JSON)', async () => {
      const { error } = await rpcError(await post(t.base, '{"jsonrpc":"2.0","id":1,"method":"GetTask"}', { 'content-type': 'text/plain' }));
      expect(error.code).toBe(-32600);
    });

    it.each([
      ['an unknown method', 'tasks/explode', '1.0', 'Method not found: tasks/explode'],
      ['a 1.0 method without A2A-Version (0.3)', 'SendMessage', null, 'send the header A2A-Version: 1.0'],
      ['a 0.3 method under A2A-Version 1.0', 'message/send', '1.0', 'an A2A 0.3 method'],
      ['ListTasks in 0.3', 'ListTasks', '0.3', 'an A2A 1.0 method'],
    ])('-32601 for %s', async (_name, method, version, message) => {
      const { id, error } = await rpcError(await rpc(t.base, method, {}, { version, id: 'req-7' }));
      expect(id).toBe('req-7');
      expect(error.code).toBe(-32601);
      expect(error.message).toContain(message);
    });

    it.each([
      ['SendMessage', { message: { messageId: 'm', role: 'ROLE_USER', parts: [] } }, 'message.parts'],
      ['SendMessage', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 1 }] } }, 'message.parts[0].text'],
      ['SendMessage', { message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'x' }] } }, 'message.role'],
      ['SendStreamingMessage', {}, 'message'],
      ['GetTask', { historyLength: -1, id: 'x' }, 'historyLength'],
      ['GetTask', [], 'params'],
      ['ListTasks', { pageSize: 0 }, 'pageSize'],
      ['ListTasks', { pageToken: 'forged' }, 'pageToken'],
      ['CancelTask', { id: 7 }, 'id'],
      ['SubscribeToTask', { id: '' }, 'id'],
    ])('-32602 for %s %j, naming %s', async (method, params, field) => {
      const { error } = await rpcError(await rpc(t.base, method, params));
      expect(error.code).toBe(-32602);
      expect(error.message).toContain(field);
      expect(error.data?.[0]).toMatchObject({ '@type': 'type.googleapis.com/google.rpc.BadRequest' });
      expect(error.data?.[0].fieldViolations?.map((v) => v.field)).toContain(field);
    });

    it('-32602 for a 0.3 message without kind, naming the field', async () => {
      const { error } = await rpcError(await rpc(t.base, 'message/send', { message: { messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'x' }] } }, { version: '0.3' }));
      expect(error.code).toBe(-32602);
      expect(error.message).toContain('message.kind');
    });

    it('-32602 for a Last-Event-ID that is not an event id of the task', async () => {
      for (const lastEventId of ['abc', '-1', '999']) {
        const { error } = await rpcError(await rpc(t.base, 'SubscribeToTask', { id: finishedTaskId }, { headers: { 'Last-Event-ID': lastEventId } }));
        expect(error.code).toBe(-32602);
        expect(error.message).toContain('Last-Event-ID');
      }
    });

    it.each([
      ['GetTask', { id: 'no-such-task' }],
      ['CancelTask', { id: 'no-such-task' }],
      ['SubscribeToTask', { id: 'no-such-task' }],
      ['SendMessage', { message: wireMessage('more', { taskId: 'no-such-task' }) }],
    ])('-32001 for %s of an unknown task, with ErrorInfo', async (method, params) => {
      const { error } = await rpcError(await rpc(t.base, method, params));
      expect(error.code).toBe(-32001);
      expect(error.data?.[0]).toMatchObject({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org' });
    });

    it('-32001 for an unknown task over 0.3 too', async () => {
      const { error } = await rpcError(await rpc(t.base, 'tasks/get', { id: 'no-such-task' }, { version: '0.3' }));
      expect(error.code).toBe(-32001);
    });

    it('-32002 for cancelling a finished task', async () => {
      const { error } = await rpcError(await rpc(t.base, 'CancelTask', { id: finishedTaskId }));
      expect(error.code).toBe(-32002);
      expect(error.message).toContain('TASK_STATE_COMPLETED');
    });

    it('-32003 for push notification configuration', async () => {
      expect((await rpcError(await rpc(t.base, 'CreateTaskPushNotificationConfig', { taskId: finishedTaskId, url: 'https://x' }))).error.code).toBe(-32003);
      const send = await rpc(t.base, 'SendMessage', { message: wireMessage('x'), configuration: { taskPushNotificationConfig: { url: 'https://x' } } });
      expect((await rpcError(send)).error.code).toBe(-32003);
    });

    it('-32004 for subscribing to a finished task, or messaging it', async () => {
      expect((await rpcError(await rpc(t.base, 'SubscribeToTask', { id: finishedTaskId }))).error.code).toBe(-32004);
      const more = await rpc(t.base, 'SendMessage', { message: wireMessage('more', { taskId: finishedTaskId }) });
      const { error } = await rpcError(more);
      expect(error.code).toBe(-32004);
      expect(error.message).toContain('contextId');
      expect((await rpcError(await rpc(t.base, 'GetExtendedAgentCard', {}))).error.code).toBe(-32004);
    });

    it('-32005 for a file part, or output modes the agent cannot produce', async () => {
      const file = await rpc(t.base, 'SendMessage', { message: wireMessage('x', { parts: [{ url: 'https://x/a.pdf', mediaType: 'application/pdf' }] }) });
      expect((await rpcError(file)).error.code).toBe(-32005);
      const modes = await rpc(t.base, 'SendMessage', { message: wireMessage('x'), configuration: { acceptedOutputModes: ['image/png'] } });
      expect((await rpcError(modes)).error.code).toBe(-32005);
    });

    it('-32005 for a 0.3 file part, by uri or by bytes', async () => {
      for (const file of [{ uri: 'https://x/a.pdf' }, { bytes: 'aGk=' }]) {
        const params = { message: { kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'file', file }] } };
        expect((await rpcError(await rpc(t.base, 'message/send', params, { version: '0.3' }))).error.code).toBe(-32005);
      }
    });

    it.each(['0.5', '2.0', 'banana'])('-32009 for A2A-Version %s, with the supported versions', async (version) => {
      const { error } = await rpcError(await rpc(t.base, 'GetTask', { id: finishedTaskId }, { version }));
      expect(error.code).toBe(-32009);
      expect(error.data?.[0]).toMatchObject({ reason: 'VERSION_NOT_SUPPORTED', metadata: { supportedVersions: '0.3,1.0' } });
    });

    it('-32603 without detail for an unexpected failure, which is logged', async () => {
      const find = jest.spyOn(t.tasks, 'find').mockImplementation(() => {
        throw new Error('secret internals');
      });
      const log = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      try {
        const response = await rpc(t.base, 'GetTask', { id: 'x' });
        const { error } = await rpcError(response);
        expect(error).toEqual({ code: -32603, message: 'Internal error' });
        expect(log).toHaveBeenCalledWith(expect.stringContaining('secret internals'));
      } finally {
        find.mockRestore();
        log.mockRestore();
      }
    });

    it("a body refusal A2A's error answering leaves goes on to the application's error handlers (Express's next), not to the route's exception filter", async () => {
      // As the demo app: no global body parser, so the JSON-RPC handler reads its body itself.
      const own = await startScriptedA2aApp(parallelWeatherAndClock, {}, { bodyParser: false });
      const answer = jest.spyOn(own.app.get(A2aPreRouteErrors), 'answer').mockReturnValue(false);
      const log = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
      try {
        const response = await post(own.base, '{"jsonrpc":"2.0",');
        // Nest's last error handler after the route answers what it does not know as a 500: not a
        // JSON-RPC error from the controller's filter, as a throw out of the handler gives.
        expect(response.status).toBe(500);
        const body = (await response.json()) as Record<string, unknown>;
        expect(body).toEqual({ statusCode: 500, message: 'Internal server error' });
        expect(answer).toHaveBeenCalled();
      } finally {
        answer.mockRestore();
        log.mockRestore();
        await own.close();
      }
    });
  });

  describe('HTTP+JSON (statuses of the spec table, google.rpc.Status bodies)', () => {
    const rest = (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
      fetch(`${t.base}${path}`, { method, body, headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers } });

    async function restError(response: Response, status: number): Promise<{ code: number; status: string; message: string; details: { reason?: string; '@type': string }[] }> {
      expect(response.status).toBe(status);
      expect(response.headers.get('content-type')).toContain('application/a2a+json');
      const text = await response.text();
      expect(text).not.toMatch(/\bat .*\(.*:\d+:\d+\)/);
      const body = JSON.parse(text) as { error: { code: number; status: string; message: string; details: { reason?: string; '@type': string }[] } };
      expect(body.error.code).toBe(status);
      return body.error;
    }

    it('400 INVALID_ARGUMENT for malformed JSON', async () => {
      expect((await restError(await rest('POST', '/message:send', '{"message":'), 400)).status).toBe('INVALID_ARGUMENT');
      expect((await restError(await rest('POST', '/message:stream', 'nope', { 'content-type': 'application/a2a+json' }), 400)).message).toMatch(/Invalid JSON/);
    });

    it('400 with field violations for bad params', async () => {
      const error = await restError(await rest('POST', '/message:send', JSON.stringify({ message: { messageId: 'm', role: 'ROLE_USER', parts: [{}] } })), 400);
      expect(error.message).toContain('message.parts');
      expect(error.details[0]['@type']).toBe('type.googleapis.com/google.rpc.BadRequest');
      expect((await restError(await rest('GET', '/tasks?pageSize=150&includeArtifacts=maybe'), 400)).message).toMatch(/pageSize.*includeArtifacts/);
      expect((await restError(await rest('GET', `/tasks/${finishedTaskId}?historyLength=-2`), 400)).message).toContain('historyLength');
    });

    it.each([
      ['GET', '/tasks/no-such-task'],
      ['POST', '/tasks/no-such-task:cancel'],
      ['POST', '/tasks/no-such-task:subscribe'],
    ])('404 NOT_FOUND with TASK_NOT_FOUND for %s %s', async (method, path) => {
      const error = await restError(await rest(method, path), 404);
      expect(error).toMatchObject({ status: 'NOT_FOUND', details: [expect.objectContaining({ reason: 'TASK_NOT_FOUND' })] });
    });

    it('400 FAILED_PRECONDITION for TaskNotCancelable and UnsupportedOperation', async () => {
      expect((await restError(await rest('POST', `/tasks/${finishedTaskId}:cancel`), 400)).details[0].reason).toBe('TASK_NOT_CANCELABLE');
      expect((await restError(await rest('POST', `/tasks/${finishedTaskId}:subscribe`), 400)).details[0].reason).toBe('UNSUPPORTED_OPERATION');
    });

    it('400 VERSION_NOT_SUPPORTED for an unknown version, and for 0.3 (absent header): this binding speaks 1.0', async () => {
      expect((await restError(await rest('GET', '/tasks', undefined, { 'a2a-version': '3.1' }), 400)).details[0].reason).toBe('VERSION_NOT_SUPPORTED');
      const legacy = await fetch(`${t.base}/tasks/${finishedTaskId}`);
      expect((await restError(legacy, 400)).message).toContain('A2A-Version: 1.0');
    });
  });

  it('the agent card needs no version and is cacheable', async () => {
    const card = await fetch(`${t.base}/.well-known/agent-card.json`);
    expect(card.status).toBe(200);
    expect(card.headers.get('cache-control')).toBe('public, max-age=300');
    const etag = card.headers.get('etag')!;
    // fetch adds Cache-Control: no-cache to conditional requests, so ask with plain http
    const status = await new Promise<number | undefined>((resolve, reject) =>
      get(`${t.base}/.well-known/agent-card.json`, { headers: { 'if-none-match': etag } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      }).on('error', reject),
    );
    expect(status).toBe(304);
  });

  it('keeps working after all of the above (no state was corrupted)', async () => {
    const events = await collect(await rpc(t.base, 'SendStreamingMessage', { message: wireMessage('weather') }));
    expect(events).toHaveLength(9);
  });
});
