/**
 * A host application's own global guards and interceptors (APP_GUARD / APP_INTERCEPTOR
 * providers, and app.useGlobalGuards / useGlobalInterceptors) run on toolstream's JSON-RPC
 * route as on any Nest route: they see its controller and handler, a guard's refusal stops the
 * call before any task starts, and an interceptor's Observable completes once the answer or the
 * stream has been sent. The JSON-RPC handler takes shortcuts of its own inside Nest's route (its
 * body read, its two guards run by hand): this keeps the host's globals out of those shortcuts.
 */
import {
  HttpException,
  ValidationPipe,
  HttpStatus,
  Injectable,
  Module,
  type CallHandler,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
  type NestInterceptor,
} from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { Observable, tap } from 'rxjs';
import type { Request, Response as ExpressResponse } from 'express';
import { A2aModule } from '../src/a2a';
import { AgentBus } from '../src/runtime';
import { ScriptedBusModule } from './support/a2a-test-app';
import { ScriptedWorker } from './support/scripted-worker';
import { collect, dataOf, rpc, wireMessage } from './support/sse';

/** What each global saw: `<who> <Controller>.<handler> <method> <url>` (and when an interceptor's stream ended). */
const seen: string[] = [];

function where(who: string, context: ExecutionContext): string {
  const req = context.switchToHttp().getRequest<Request>();
  return `${who} ${context.getClass().name}.${context.getHandler().name} ${req.method} ${req.url}`;
}

@Injectable()
class ProvidedGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    seen.push(where('provided guard', context));
    const http = context.switchToHttp();
    if (http.getRequest<Request>().headers['x-host-throttle'] !== undefined) {
      // As a rate limiter does: its header on the response, then its exception.
      http.getResponse<ExpressResponse>().setHeader('Retry-After', '7');
      throw new HttpException('Too Many Requests', HttpStatus.TOO_MANY_REQUESTS);
    }
    return http.getRequest<Request>().headers['x-host-deny'] === undefined;
  }
}

@Injectable()
class ProvidedInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    seen.push(where('provided interceptor', context));
    return next.handle().pipe(tap({ complete: () => seen.push('provided interceptor complete') }));
  }
}

class AppGuard implements CanActivate {
  canActivate(context: ExecutionContext): Promise<boolean> {
    seen.push(where('app guard', context));
    // Asynchronous, as a host's guard may be (a session lookup): the route waits for it.
    return new Promise((resolve) => setTimeout(() => resolve(true), 5));
  }
}

class AppInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    seen.push(where('app interceptor', context));
    return next.handle().pipe(tap({ complete: () => seen.push('app interceptor complete') }));
  }
}

@Module({
  imports: [ScriptedBusModule, A2aModule.forRoot({ auth: false })],
  providers: [
    { provide: APP_GUARD, useClass: ProvidedGuard },
    { provide: APP_INTERCEPTOR, useClass: ProvidedInterceptor },
  ],
})
class HostModule {}

describe("a host's global guards and interceptors on the JSON-RPC route (e2e)", () => {
  let app: INestApplication;
  let base: string;
  let worker: ScriptedWorker;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [HostModule] }).compile();
    app = moduleRef.createNestApplication({ logger: ['error', 'warn'], forceCloseConnections: true });
    app.useGlobalGuards(new AppGuard());
    app.useGlobalInterceptors(new AppInterceptor());
    // A strict global ValidationPipe, as many hosts have: it must neither refuse nor strip A2A's fields.
    app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
    await app.listen(0, '127.0.0.1');
    base = await app.getUrl();
    worker = new ScriptedWorker(app.get(AgentBus), (run) => run.reply('done')).start();
  });

  beforeEach(() => {
    seen.length = 0;
  });

  afterAll(async () => {
    worker?.stop();
    await app?.close();
  });

  it('run before a streaming send, see its route, and end with its stream', async () => {
    const response = await rpc(base, 'SendStreamingMessage', { message: wireMessage('hello') });
    expect(response.status).toBe(200);
    const events = (await collect(response)).map(dataOf);
    expect(events[events.length - 1]).toMatchObject({ result: { statusUpdate: { status: { state: 'TASK_STATE_COMPLETED' } } } });
    // Guards before interceptors; Nest runs the providers' (APP_*) before the app's (useGlobal*).
    expect(seen.slice(0, 4)).toEqual([
      'provided guard A2aJsonRpcController.handle POST /a2a',
      'app guard A2aJsonRpcController.handle POST /a2a',
      'provided interceptor A2aJsonRpcController.handle POST /a2a',
      'app interceptor A2aJsonRpcController.handle POST /a2a',
    ]);
    expect(seen.slice(4).sort()).toEqual(['app interceptor complete', 'provided interceptor complete']);
  });

  it('run before a unary call too', async () => {
    const response = await rpc(base, 'SendMessage', { message: wireMessage('hello'), configuration: { returnImmediately: true } });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', id: 1, result: { task: { id: expect.any(String) } } });
    expect(seen.slice(0, 4)).toEqual([
      'provided guard A2aJsonRpcController.handle POST /a2a',
      'app guard A2aJsonRpcController.handle POST /a2a',
      'provided interceptor A2aJsonRpcController.handle POST /a2a',
      'app interceptor A2aJsonRpcController.handle POST /a2a',
    ]);
  });

  it("a host's strict global ValidationPipe keeps every field of a message, on both bindings", async () => {
    const message = wireMessage('hello', { parts: [{ text: 'hello', metadata: { part: 1 } }], metadata: { keep: 'me', nested: { x: 1 } }, extensions: ['urn:example:ext'] });
    const sent = { messageId: message.messageId, parts: message.parts, metadata: message.metadata, extensions: message.extensions };
    const streamed = (await collect(await rpc(base, 'SendStreamingMessage', { message }))).map(dataOf);
    expect(streamed[0]).toMatchObject({ result: { task: { history: [sent] } } });
    const rest = await fetch(`${base}/message:send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({ message: { ...message, messageId: 'rest-1' }, metadata: { top: 1 } }),
    });
    expect(rest.status).toBe(200);
    const { task } = (await rest.json()) as { task: { history: unknown[] } };
    expect(task.history[0]).toMatchObject({ ...sent, messageId: 'rest-1' });
    const listed = await fetch(`${base}/tasks?pageSize=5&historyLength=1`, { headers: { 'A2A-Version': '1.0' } });
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { tasks: unknown[] }).tasks.length).toBeGreaterThan(0);
  });

  it("a guard's refusal stops the call: no task is started, no interceptor runs, its 403 is kept", async () => {
    const runs = worker.runs.size;
    const response = await rpc(base, 'SendStreamingMessage', { message: wireMessage('hello') }, { headers: { 'x-host-deny': '1' } });
    // Answered by the route's JSON-RPC exception filter, in the binding's shape, with the guard's
    // HTTP status and Nest's message for it (A2A 1.0: an authorization error is a custom error).
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'Forbidden resource' } });
    expect(seen).toEqual(['provided guard A2aJsonRpcController.handle POST /a2a']);
    expect(worker.runs.size).toBe(runs);
  });

  it("a host's throttling keeps its 429 and the Retry-After it set, on both bindings", async () => {
    const runs = worker.runs.size;
    const response = await rpc(base, 'SendStreamingMessage', { message: wireMessage('hello') }, { headers: { 'x-host-throttle': '1' } });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('7');
    expect(await response.json()).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'Too Many Requests' } });
    const rest = await fetch(`${base}/tasks`, { headers: { 'x-host-throttle': '1' } });
    expect(rest.status).toBe(429);
    expect(rest.headers.get('retry-after')).toBe('7');
    expect(await rest.json()).toEqual({ error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'Too Many Requests', details: [] } });
    expect(worker.runs.size).toBe(runs);
  });

  it("a guard's refusal on the HTTP+JSON binding is its 403, PERMISSION_DENIED", async () => {
    const rest = await fetch(`${base}/tasks`, { headers: { 'x-host-deny': '1' } });
    expect(rest.status).toBe(403);
    expect(await rest.json()).toEqual({ error: { code: 403, status: 'PERMISSION_DENIED', message: 'Forbidden resource', details: [] } });
    expect(seen).toEqual(['provided guard A2aController.listTasks GET /tasks']);
  });
});
