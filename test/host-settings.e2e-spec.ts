/**
 * toolstream inside a host application configured as backend teams commonly configure theirs:
 * each describe below is one host setting, with A2aModule imported beside the host's own routes
 * and served on a free loopback port. Under every setting the same sweep asks each A2A endpoint
 * what a client asks of it (the agent card and the URLs it names, JSON-RPC streaming and unary,
 * HTTP+JSON send, stream, get and list, an error on each binding) and checks A2A's wire format,
 * byte for byte where it matters (SSE ids, envelopes). Streams must be live: the worker holds
 * its run after its first tool frame, and the client must read that frame before the run is let
 * go (a response buffered to its end, by gzip or anything else, fails naming what it waited for).
 */
import {
  Catch,
  Controller,
  Get,
  HttpException,
  HttpStatus,
  Injectable,
  Module,
  RequestTimeoutException,
  VersioningType,
  type ArgumentsHost,
  type CallHandler,
  type ExceptionFilter,
  type ExecutionContext,
  type INestApplication,
  type NestApplicationOptions,
  type NestInterceptor,
} from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import compression from 'compression';
import type { Response as ExpressResponse } from 'express';
import { catchError, map, throwError, timeout, TimeoutError, type Observable } from 'rxjs';
import { A2aModule, isA2aRoute, type A2aModuleExtras, type A2aModuleOptions } from '../src/a2a';
import { AgentBus } from '../src/runtime';
import { ScriptedBusModule } from './support/a2a-test-app';
import { CaptureLogger } from './support/capture-logger';
import { ScriptedWorker } from './support/scripted-worker';
import { collect, dataOf, eventually, readSse, within, wireMessage, type SseMessage } from './support/sse';

const KEY = 'host-settings-key-0123456789';

/**
 * The common `TransformInterceptor`: every handler's result wrapped as `{ data: ... }`; with
 * `letA2aThrough`, as docs/configuration.md asks of a host's result-mapping interceptor.
 */
@Injectable()
class TransformInterceptor implements NestInterceptor {
  constructor(private readonly letA2aThrough = false) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (this.letA2aThrough && isA2aRoute(context)) return next.handle();
    return next.handle().pipe(map((data: unknown) => ({ data })));
  }
}

/** Nest's documented TimeoutInterceptor: a handler not done within `ms` answers 408 (`letA2aThrough` as above). */
@Injectable()
class TimeoutInterceptor implements NestInterceptor {
  constructor(
    private readonly ms: number,
    private readonly letA2aThrough = false,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (this.letA2aThrough && isA2aRoute(context)) return next.handle();
    return next.handle().pipe(
      timeout(this.ms),
      catchError((err: unknown) => throwError(() => (err instanceof TimeoutError ? new RequestTimeoutException() : err))),
    );
  }
}

/** A host's catch-everything filter, answering in its own shape. */
@Catch()
class HostFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const status = exception instanceof HttpException ? exception.getStatus() : 500;
    host.switchToHttp().getResponse<ExpressResponse>().status(status).json({ ok: false, hostError: exception instanceof Error ? exception.message : String(exception) });
  }
}

/** The host's own route (versioned when the host versions its routes). */
@Controller('orders')
class OrdersController {
  @Get()
  list(): { orders: string[] } {
    return { orders: ['o-1'] };
  }

  @Get('broken')
  broken(): never {
    throw new HttpException('no such order', HttpStatus.NOT_FOUND);
  }
}

interface Host {
  app: INestApplication;
  base: string;
  worker: ScriptedWorker;
  /** Lets the held run go on (its tool completes, it replies). */
  release(): void;
}

async function startHost(
  setup: (app: NestExpressApplication) => void,
  options: A2aModuleOptions & A2aModuleExtras = { auth: false },
  appOptions: NestApplicationOptions = {},
): Promise<Host> {
  @Module({ imports: [ScriptedBusModule, A2aModule.forRoot(options)], controllers: [OrdersController] })
  class HostModule {}
  const moduleRef = await Test.createTestingModule({ imports: [HostModule] }).compile();
  const app = moduleRef.createNestApplication<NestExpressApplication>({ logger: ['error', 'warn'], forceCloseConnections: true, ...appOptions });
  setup(app);
  await app.listen(0, '127.0.0.1');
  let held: (() => void)[] = [];
  const worker = new ScriptedWorker(app.get(AgentBus), async (run) => {
    run.started('call-1', 'lookup', { q: 'x' });
    await new Promise<void>((resolve) => held.push(resolve));
    run.completed('call-1', 'lookup', { found: true });
    run.reply('done');
  }).start();
  const release = (): void => {
    const waiting = held;
    held = [];
    for (const resolve of waiting) resolve();
  };
  return { app, base: await app.getUrl(), worker, release };
}

async function stop(host: Host | undefined): Promise<void> {
  host?.release();
  host?.worker.stop();
  await host?.app.close();
}

/**
 * A stream read live: its messages up to the tool's started frame while the run is held, then
 * the rest once it is let go. Each data message's JSON, as `unwrap` takes it out of its envelope.
 */
async function liveStream(host: Host, response: Response, unwrap: (data: Record<string, unknown>) => Record<string, unknown>, what: string): Promise<{ messages: SseMessage[]; results: Record<string, unknown>[] }> {
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const messages: SseMessage[] = [];
  const results: Record<string, unknown>[] = [];
  const reader = readSse(response);
  const started = (result: Record<string, unknown>): boolean => JSON.stringify(result).includes('"phase":"started"');
  while (!results.some(started)) {
    const next = await within(reader.next(), 5_000, () => `${what}: the tool's started frame while the run is held (read so far: ${JSON.stringify(messages).slice(0, 600)})`);
    if (next.done) throw new Error(`${what} ended before the run was let go: ${JSON.stringify(messages).slice(0, 600)}`);
    messages.push(next.value);
    if (next.value.data !== undefined) results.push(unwrap(dataOf(next.value)));
  }
  host.release();
  for (let next = await reader.next(); !next.done; next = await reader.next()) {
    messages.push(next.value);
    if (next.value.data !== undefined) results.push(unwrap(dataOf(next.value)));
  }
  // SSE ids are the task's sequence numbers, one per data message, rising.
  const ids = messages.filter((m) => m.data !== undefined).map((m) => Number(m.id));
  expect(ids.every((id, i) => Number.isInteger(id) && (i === 0 || id > ids[i - 1]))).toBe(true);
  expect(Object.keys(results[0])).toEqual(['task']);
  expect(results[results.length - 1]).toMatchObject({ statusUpdate: { status: { state: 'TASK_STATE_COMPLETED' } } });
  for (const result of results) expect(Object.keys(result).length === 1 && ['task', 'statusUpdate', 'artifactUpdate', 'message'].includes(Object.keys(result)[0])).toBe(true);
  return { messages, results };
}

const A2A = { 'content-type': 'application/json', 'A2A-Version': '1.0' };

function rpcCall(url: string, method: string, params: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { ...A2A, ...headers }, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }) });
}

function restCall(url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: body === undefined ? 'GET' : 'POST', headers: { ...A2A, ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
}

const rpcResult = (data: Record<string, unknown>): Record<string, unknown> => {
  expect(Object.keys(data)).toEqual(['jsonrpc', 'id', 'result']);
  expect(data).toMatchObject({ jsonrpc: '2.0', id: 7 });
  return data.result as Record<string, unknown>;
};
const bare = (data: Record<string, unknown>): Record<string, unknown> => data;

/**
 * What a client of every A2A endpoint sees: the card from its well-known URL, and each binding
 * at the URL the card names for it. `headers` go with every request (credentials, an Origin).
 */
async function sweep(host: Host, headers: Record<string, string> = {}, mountedAt = host.base, restStream = true): Promise<{ rpcUrl: string; restUrl: string }> {
  const cardResponse = await fetch(`${mountedAt}/.well-known/agent-card.json`, { headers });
  expect(cardResponse.status).toBe(200);
  const card = (await cardResponse.json()) as { name?: unknown; url?: unknown; supportedInterfaces?: { url: string; protocolBinding: string }[] };
  expect(card.name).toEqual(expect.any(String));
  const rpcUrl = card.supportedInterfaces?.find((i) => i.protocolBinding === 'JSONRPC')?.url ?? '(none)';
  const restUrl = card.supportedInterfaces?.find((i) => i.protocolBinding === 'HTTP+JSON')?.url ?? '(none)';
  expect(card.url).toBe(rpcUrl);

  // JSON-RPC, at the URL the card names: a live stream, a unary send, an error.
  const streamed = await liveStream(host, await rpcCall(rpcUrl, 'SendStreamingMessage', { message: wireMessage('hello') }, headers), rpcResult, 'the JSON-RPC stream');
  const taskId = (streamed.results[0].task as { id: string }).id;
  const unary = await rpcCall(rpcUrl, 'SendMessage', { message: wireMessage('hello'), configuration: { returnImmediately: true } }, headers);
  expect(unary.status).toBe(200);
  expect(rpcResult((await unary.json()) as Record<string, unknown>)).toMatchObject({ task: { id: expect.any(String) } });
  const missing = await rpcCall(rpcUrl, 'GetTask', { id: 'no-such-task' }, headers);
  expect(missing.status).toBe(200);
  expect(await missing.json()).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32001, message: 'Task no-such-task not found' } });

  // HTTP+JSON, at the URL the card names: send, a live stream, get, list, an error.
  const sent = await restCall(`${restUrl}/message:send`, { message: wireMessage('hello'), configuration: { returnImmediately: true } }, headers);
  expect(sent.status).toBe(200);
  expect(sent.headers.get('content-type')).toMatch(/^application\/a2a\+json/);
  const sentBody = (await sent.json()) as Record<string, unknown>;
  expect(Object.keys(sentBody)).toEqual(['task']);
  if (restStream) await liveStream(host, await restCall(`${restUrl}/message:stream`, { message: wireMessage('hello') }, headers), bare, 'the HTTP+JSON stream');
  const got = await restCall(`${restUrl}/tasks/${taskId}`, undefined, headers);
  expect(got.status).toBe(200);
  expect(await got.json()).toMatchObject({ id: taskId, status: { state: 'TASK_STATE_COMPLETED' } });
  const listed = await restCall(`${restUrl}/tasks?pageSize=50`, undefined, headers);
  expect(listed.status).toBe(200);
  const list = (await listed.json()) as { tasks?: { id: string }[] };
  expect(list.tasks?.map((t) => t.id)).toContain(taskId);
  const gone = await restCall(`${restUrl}/tasks/no-such-task`, undefined, headers);
  expect(gone.status).toBe(404);
  expect(await gone.json()).toMatchObject({ error: { code: 404, status: 'NOT_FOUND', message: 'Task no-such-task not found' } });
  return { rpcUrl, restUrl };
}

describe('a host with a global response-mapping interceptor (TransformInterceptor) (e2e)', () => {
  let host: Host;
  beforeAll(async () => {
    host = await startHost((app) => app.useGlobalInterceptors(new TransformInterceptor()));
  });
  afterAll(() => stop(host));

  it("keeps A2A's wire format where toolstream writes the answer itself: the card, both bindings' unary answers, the JSON-RPC stream", async () => {
    // The HTTP+JSON streams are Nest @Sse routes: an interceptor maps their events as any
    // route's (docs/configuration.md); the describe below lets A2A through and sweeps them too.
    await sweep(host, {}, host.base, false);
  });

  it("still maps the host's own routes", async () => {
    expect(await (await fetch(`${host.base}/orders`)).json()).toEqual({ data: { orders: ['o-1'] } });
  });
});

describe("a host whose global interceptors let A2A's routes through (isA2aRoute) (e2e)", () => {
  let host: Host;
  beforeAll(async () => {
    host = await startHost((app) => app.useGlobalInterceptors(new TransformInterceptor(true), new TimeoutInterceptor(200, true)));
  });
  afterAll(() => stop(host));

  it("keeps A2A's wire format on every endpoint, both bindings' streams included", async () => {
    await sweep(host);
  });

  it('does not cut streams that outlast the timeout, on either binding', async () => {
    const rpcStream = await rpcCall(`${host.base}/a2a`, 'SendStreamingMessage', { message: wireMessage('hello') });
    const restStream = await restCall(`${host.base}/message:stream`, { message: wireMessage('hello') });
    await new Promise((resolve) => setTimeout(resolve, 400));
    host.release();
    for (const [response, unwrap] of [[rpcStream, rpcResult], [restStream, bare]] as const) {
      const results = (await collect(response)).filter((m) => m.data !== undefined).map((m) => unwrap(dataOf(m)));
      expect(results[results.length - 1]).toMatchObject({ statusUpdate: { status: { state: 'TASK_STATE_COMPLETED' } } });
    }
  });

  it("still maps the host's own routes", async () => {
    expect(await (await fetch(`${host.base}/orders`)).json()).toEqual({ data: { orders: ['o-1'] } });
  });
});

describe("a host with Nest's TimeoutInterceptor (200 ms) (e2e)", () => {
  let host: Host;
  const logger = new CaptureLogger();
  beforeAll(async () => {
    host = await startHost((app) => app.useGlobalInterceptors(new TimeoutInterceptor(200)), { auth: false }, { logger });
  });
  afterAll(() => stop(host));

  it('does not cut a JSON-RPC stream that outlasts it (toolstream writes it; the HTTP+JSON @Sse streams need isA2aRoute, above)', async () => {
    const rpcStream = await rpcCall(`${host.base}/a2a`, 'SendStreamingMessage', { message: wireMessage('hello') });
    await new Promise((resolve) => setTimeout(resolve, 400));
    host.release();
    const results = (await collect(rpcStream)).filter((m) => m.data !== undefined).map((m) => rpcResult(dataOf(m)));
    expect(results[results.length - 1]).toMatchObject({ statusUpdate: { status: { state: 'TASK_STATE_COMPLETED' } } });
  });

  it("answers a blocking send that outlasts it with the host's 408 in each binding's shape, and the late answer is dropped with a warning, not an error", async () => {
    const errorsBefore = logger.errors.length;
    const rpcSent = rpcCall(`${host.base}/a2a`, 'SendMessage', { message: wireMessage('hello') });
    const restSent = restCall(`${host.base}/message:send`, { message: wireMessage('hello') });
    const [rpcAnswer, restAnswer] = await Promise.all([rpcSent, restSent]);
    expect(rpcAnswer.status).toBe(408);
    expect(await rpcAnswer.json()).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32600, message: 'Request Timeout' } });
    expect(restAnswer.status).toBe(408);
    expect(await restAnswer.json()).toEqual({ error: { code: 408, status: 'DEADLINE_EXCEEDED', message: 'Request Timeout', details: [] } });
    host.release();
    await eventually(() => logger.lines.filter((l) => l.includes('not sent: the application had answered the request already (HTTP 408')).length === 2, 5_000, 'both late answers dropped');
    expect(logger.errors.slice(errorsBefore)).toEqual([]);
  });
});

describe('a host with app.use(compression()) (e2e)', () => {
  let host: Host;
  beforeAll(async () => {
    host = await startHost((app) => app.use(compression()));
  });
  afterAll(() => stop(host));

  it('streams stay live on both bindings (a gzip-asking client), and the unary answers are A2A', async () => {
    await sweep(host, { 'accept-encoding': 'gzip' });
  });

  it('compresses what it can: the card (not a stream)', async () => {
    const card = await fetch(`${host.base}/.well-known/agent-card.json`, { headers: { 'accept-encoding': 'gzip' } });
    expect(card.headers.get('content-encoding')).toBe('gzip');
  });
});

describe('a host with URI versioning (defaultVersion 1) (e2e)', () => {
  let host: Host;
  beforeAll(async () => {
    host = await startHost((app) => app.enableVersioning({ type: VersioningType.URI, defaultVersion: '1' }));
  });
  afterAll(() => stop(host));

  it('serves A2A where A2aModule mounts it (A2A versions itself), and the card names URLs that work', async () => {
    const { rpcUrl, restUrl } = await sweep(host);
    expect(rpcUrl).toBe(`${host.base}/a2a`);
    expect(restUrl).toBe(host.base);
  });

  it("versions the host's own routes, and the application's JSON parser's refusal on /a2a keeps JSON-RPC's shape", async () => {
    expect((await fetch(`${host.base}/v1/orders`)).status).toBe(200);
    const broken = await fetch(`${host.base}/a2a`, { method: 'POST', headers: A2A, body: '{"jsonrpc":' });
    expect(await broken.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  });

  it("A2aModule's path puts A2A beside the host's /v1 routes when wanted", async () => {
    const v1 = await startHost((app) => app.enableVersioning({ type: VersioningType.URI, defaultVersion: '1' }), { auth: false, path: 'v1' });
    try {
      const { rpcUrl, restUrl } = await sweep(v1, {}, `${v1.base}/v1`);
      expect([rpcUrl, restUrl]).toEqual([`${v1.base}/v1/a2a`, `${v1.base}/v1`]);
      expect((await fetch(`${v1.base}/v1/orders`)).status).toBe(200);
    } finally {
      await stop(v1);
    }
  });
});

describe('a host with app.enableCors() (e2e)', () => {
  let host: Host;
  const origin = 'https://console.example';
  const a2aHeaders = 'content-type,a2a-version,a2a-extensions,last-event-id,authorization,x-api-key';
  beforeAll(async () => {
    host = await startHost((app) => app.enableCors(), { auth: { apiKeys: [KEY] } });
  });
  afterAll(() => stop(host));

  it.each(['/a2a', '/message:stream', '/message:send', '/tasks/some-task:subscribe', '/tasks/some-task'])(
    'answers the preflight of %s with the A2A headers allowed, before authentication',
    async (path) => {
      const preflight = await fetch(`${host.base}${path}`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': a2aHeaders },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
      expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
      expect(preflight.headers.get('access-control-allow-headers')?.split(',')).toEqual(expect.arrayContaining(a2aHeaders.split(',')));
    },
  );

  it('serves every endpoint to a cross-origin client, live, each answer allowed to its origin', async () => {
    await sweep(host, { origin, 'x-api-key': KEY });
    const streamed = await rpcCall(`${host.base}/a2a`, 'SendStreamingMessage', { message: wireMessage('hi') }, { origin, 'x-api-key': KEY });
    expect(streamed.headers.get('access-control-allow-origin')).toBe('*');
    host.release();
    await collect(streamed);
  });

  it('refuses a request without credentials in A2A shape, with the CORS header a browser needs to read it', async () => {
    const refused = await rpcCall(`${host.base}/a2a`, 'GetTask', { id: 'x' }, { origin });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    expect(await refused.json()).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32000 } });
  });
});

describe("a host's JSON body parser and maxBodyBytes (e2e)", () => {
  // A message of ~30 KB: over maxBodyBytes (20,000) and the host's 10kb, under Nest's default 100kb.
  const large = { message: wireMessage('x'.repeat(30_000)) };
  const small = { message: wireMessage('hello'), configuration: { returnImmediately: true } };

  async function refusals(base: string): Promise<{ rpc: { status: number; body: unknown }; rest: { status: number; body: unknown }; restStream: { status: number; body: unknown } }> {
    const rpc = await rpcCall(`${base}/a2a`, 'SendMessage', large);
    const rest = await restCall(`${base}/message:send`, large);
    const restStream = await restCall(`${base}/message:stream`, large);
    return {
      rpc: { status: rpc.status, body: await rpc.json() },
      rest: { status: rest.status, body: await rest.json() },
      restStream: { status: restStream.status, body: await restStream.json() },
    };
  }

  function expectRefused(seen: Awaited<ReturnType<typeof refusals>>, message: string): void {
    // The call's id when the body had been parsed before the refusal (by the host's parser), else null.
    expect(seen.rpc).toEqual({ status: 413, body: { jsonrpc: '2.0', id: (seen.rpc.body as { id: unknown }).id === null ? null : 7, error: expect.objectContaining({ code: -32600, message }) } });
    expect(seen.rest).toEqual({ status: 413, body: { error: expect.objectContaining({ code: 413, message }) } });
    expect(seen.restStream).toEqual(seen.rest);
  }

  it.each([
    ["Nest's default JSON parser (100kb)", {}, (): void => undefined],
    ['bodyParser: false', { bodyParser: false }, (): void => undefined],
    ["useBodyParser('json', { limit: '5mb' })", {}, (app: NestExpressApplication): void => void app.useBodyParser('json', { limit: '5mb' })],
  ] as const)('%s: a body over maxBodyBytes gets toolstream 413 naming maxBodyBytes, on both bindings', async (_name, appOptions, setup) => {
    const logger = new CaptureLogger();
    const host = await startHost(setup, { auth: false, maxBodyBytes: 20_000 }, { ...appOptions, logger });
    try {
      expectRefused(await refusals(host.base), 'The request body exceeds the limit of 20000 bytes (maxBodyBytes)');
      expect((await rpcCall(`${host.base}/a2a`, 'SendMessage', small)).status).toBe(200);
      expect((await restCall(`${host.base}/message:send`, small)).status).toBe(200);
      expect(logger.text()).not.toContain('JSON body parser');
    } finally {
      await stop(host);
    }
  });

  it("useBodyParser('json', { limit: '10kb' }) under maxBodyBytes: the host's limit, named as the application's, on both bindings", async () => {
    const logger = new CaptureLogger();
    const host = await startHost((app) => void app.useBodyParser('json', { limit: '10kb' }), { auth: false, maxBodyBytes: 20_000 }, { logger });
    try {
      expectRefused(await refusals(host.base), "The request body exceeds the limit of 10240 bytes (the application's JSON parser limit)");
      // The host's setting caps what maxBodyBytes allows: said once (three refusals above), naming both.
      expect(logger.lines.filter((line) => line.includes('JSON body parser'))).toEqual([
        expect.stringContaining(
          "the application's JSON body parser refused an A2A request at its limit of 10240 bytes, below maxBodyBytes (20000): A2A messages between the two are refused. Raise its limit (app.useBodyParser('json', { limit: 20000 })) or leave A2A bodies to A2aModule (NestFactory.create(AppModule, { bodyParser: false }))",
        ),
      ]);
      await sweep(host);
    } finally {
      await stop(host);
    }
  });
});

describe('a host with a global catch-everything exception filter (e2e)', () => {
  let host: Host;
  beforeAll(async () => {
    host = await startHost((app) => app.useGlobalFilters(new HostFilter()), { auth: { apiKeys: [KEY] } });
  });
  afterAll(() => stop(host));

  it("answers its own routes' errors in its own shape", async () => {
    const broken = await fetch(`${host.base}/orders/broken`);
    expect(broken.status).toBe(404);
    expect(await broken.json()).toEqual({ ok: false, hostError: 'no such order' });
  });

  it("leaves A2A's errors in A2A's shapes on both bindings", async () => {
    await sweep(host, { 'x-api-key': KEY });
    const rpcRefused = await rpcCall(`${host.base}/a2a`, 'GetTask', { id: 'x' });
    expect(rpcRefused.status).toBe(401);
    expect(rpcRefused.headers.get('www-authenticate')).toContain('ApiKey');
    expect(await rpcRefused.json()).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32000 } });
    const restRefused = await restCall(`${host.base}/tasks`);
    expect(restRefused.status).toBe(401);
    expect(await restRefused.json()).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
    const malformed = await fetch(`${host.base}/a2a`, { method: 'POST', headers: { ...A2A, 'x-api-key': KEY }, body: '{"jsonrpc":' });
    expect(await malformed.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    const restMalformed = await fetch(`${host.base}/message:send`, { method: 'POST', headers: { ...A2A, 'x-api-key': KEY }, body: '{"message":' });
    expect(restMalformed.status).toBe(400);
    expect(await restMalformed.json()).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } });
    const unknownMethod = await rpcCall(`${host.base}/a2a`, 'NoSuchMethod', {}, { 'x-api-key': KEY });
    expect(await unknownMethod.json()).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32601 } });
    const invalid = await restCall(`${host.base}/message:send`, { message: { role: 'ROLE_USER' } }, { 'x-api-key': KEY });
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } });
  });
});
