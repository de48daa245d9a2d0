import { Controller, Logger, Post, Res, UseFilters, VERSION_NEUTRAL, type Type } from '@nestjs/common';
import { A2aRoute } from './a2a-route';
import { SendMessageResponse } from '@a2a-js/sdk';
import { isLegacyJsonRpcMethod, isV1JsonRpcMethod } from '@a2a-js/sdk/compat/v0_3';
import type { NextFunction, Request, Response } from 'express';
import { JSON_RPC_PATH, LAST_EVENT_ID_HEADER } from './a2a.constants';
import { extensionHeaders, type A2aCallContext } from './a2a-call-context';
import {
  answeredByHost,
  invalidParams,
  invalidRequest,
  isKnownError,
  jsonRpcHttpStatus,
  methodNotFound,
  pushNotificationNotSupported,
  toJsonRpcErrorObject,
  unsupportedOperation,
} from './a2a-errors';
import { A2aJsonBodyMiddleware } from './a2a-json-body.middleware';
import { A2aService, type SendRequest, type TaskStream } from './a2a.service';
import { A2aValidationPipe } from './dto/a2a-validation.pipe';
import { SendMessageRequestDto } from './dto/send-message.dto';
import { isCommonSendMessageRequest } from './dto/send-message.shape';
import { MessageSendParamsV03Dto } from './dto/send-message-v03.dto';
import { GetTaskRequestDto, ListTasksRequestDto, TaskIdRequestDto } from './dto/task-requests.dto';
import { jsonRpcResult, type JsonRpcId, type TaskSseStream } from './sse-framing';
import { A2aAuthGuard } from './auth/a2a-auth.guard';
import { JsonRpcExceptionFilter, requestId } from './json-rpc-exception.filter';
import { MessageLimitsPipe } from './limits/message-limits.pipe';
import { DrainGuard } from './shutdown/drain.guard';

interface JsonRpcCall {
  id: JsonRpcId;
  method: string;
  params: unknown;
}

/** What a method answers: one JSON result, or an event stream. */
type Outcome = { kind: 'json'; result: string } | { kind: 'stream'; sse: TaskSseStream };

const PUSH_METHODS = new Set([
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
  'tasks/pushNotificationConfig/set',
  'tasks/pushNotificationConfig/get',
  'tasks/pushNotificationConfig/list',
  'tasks/pushNotificationConfig/delete',
]);
const EXTENDED_CARD_METHODS = new Set(['GetExtendedAgentCard', 'agent/getAuthenticatedExtendedCard']);
const LAST_EVENT_ID = LAST_EVENT_ID_HEADER.toLowerCase();
/** A JSON-RPC stream's response headers, besides the extension headers. */
const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};
/** A stream's whole head per set of extension headers (shared, as extensionHeaders gives them): made once, not per stream. */
const streamHeads = new WeakMap<Readonly<Record<string, string>>, Readonly<Record<string, string>>>();

function streamHead(extensions: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  let head = streamHeads.get(extensions);
  if (!head) streamHeads.set(extensions, (head = Object.freeze({ ...SSE_HEADERS, ...extensions })));
  return head;
}

/**
 * The JSON-RPC binding at one URL. Route decorators cannot split one path between a JSON
 * handler and an @Sse handler, so this one handler dispatches on `method`: unary methods answer
 * JSON, streaming ones write the same Observable pipeline the @Sse handlers of A2aController
 * return, framed as JSON-RPC responses. Every failure is a JSON-RPC error, never an HTTP 500;
 * refusals about the HTTP exchange (401 by A2aAuthGuard, 503 while draining, 413) keep their
 * HTTP status.
 *
 * The two guards (drain, then authentication) are run by `handle` itself, first, rather than
 * declared with @UseGuards: Nest's guard consumer costs two promises, an execution context
 * with its closures and two microtask turns on every request, for two synchronous checks.
 * Likewise its body is read by `handle` (A2aJsonBodyMiddleware.read: the same checks and
 * refusals, before the guards), not by the middleware applied through Nest, which wraps it
 * per request in an async proxy and a WeakSet entry behind an Express `use` layer.
 */
@Controller({ version: VERSION_NEUTRAL })
@A2aRoute()
@UseFilters(JsonRpcExceptionFilter)
export class A2aJsonRpcController {
  private readonly logger = new Logger(A2aJsonRpcController.name);
  /** What a stream's failure does (one function for every stream, not a closure each). */
  private readonly streamFailed = (err: unknown): void => this.logger.error(`stream failed: ${err instanceof Error ? err.message : String(err)}`);

  constructor(
    private readonly a2a: A2aService,
    private readonly validation: A2aValidationPipe,
    private readonly messageLimits: MessageLimitsPipe,
    private readonly drainGuard: DrainGuard,
    private readonly authGuard: A2aAuthGuard,
    private readonly body: A2aJsonBodyMiddleware,
  ) {}

  /**
   * Reads the body, then answers the call: at once, without a promise, when the body has been
   * received whole and the method answers at once (a streaming send on the in-memory store):
   * each async layer on every stream's path is a promise and a microtask more.
   */
  @Post(JSON_RPC_PATH)
  handle(@Res() res: Response): Promise<void> | undefined {
    // The request as Express links it to its response, and the router's `next` as Express's router
    // sets it on the request (where Nest's @Next() would hand the route's, which passes an error
    // straight on to it): each parameter Nest resolves costs an async function, its promise and a
    // Promise.all entry per request.
    const req = res.req;
    const next = req.next as NextFunction;
    let answer: Promise<void> | undefined;
    let now = true;
    this.body.read(req, res, next, () => {
      if (now) {
        answer = this.call(req, res);
        return;
      }
      // Read later (from the request's events): no one awaits the answer or catches what it
      // throws, so a failure to send even the error is handled here.
      try {
        this.call(req, res)?.then(undefined, (err: unknown) => this.lost(res, err));
      } catch (err) {
        this.lost(res, err);
      }
    });
    now = false;
    return answer;
  }

  /** The call in a body read and checked: the guards' checks first, then the method. */
  private call(req: Request, res: Response): Promise<void> | undefined {
    let id: JsonRpcId = null;
    try {
      this.drainGuard.refuseIfDraining();
      this.authGuard.authenticate(req);
    } catch (err) {
      // As the exception filter answered the guards' refusals: with the body's id, if usable.
      this.fail(res, requestId(req.body), err);
      return undefined;
    }
    try {
      const call = readCall(req.body);
      id = call.id;
      const ctx = this.a2a.negotiate(req);
      const outcome = this.dispatch(call, ctx, req, res);
      if (outcome instanceof Promise) {
        // A host's interceptor may have answered meanwhile (its timeout's 408): then nothing more is sent.
        const failed = (err: unknown): void => void (answeredByHost(res, this.logger, 'JSON-RPC error') || this.fail(res, id, err));
        return outcome.then((answer) => void (answeredByHost(res, this.logger, 'JSON-RPC answer') || this.answer(res, id, ctx, answer))).then(undefined, failed);
      }
      // A stream set up at once attaches once the microtasks queued meanwhile have run, as it did
      // after the awaits it no longer takes: a run that publishes a burst as it starts finds the
      // log held for the stream (past its cap if need be), not a stream its socket already paces.
      process.nextTick(() => this.answerLater(res, id, ctx, outcome));
    } catch (err) {
      this.fail(res, id, err);
    }
    return undefined;
  }

  private answerLater(res: Response, id: JsonRpcId, ctx: A2aCallContext, outcome: Outcome): void {
    try {
      this.answer(res, id, ctx, outcome);
    } catch (err) {
      try {
        this.fail(res, id, err);
      } catch (failed) {
        this.lost(res, failed);
      }
    }
  }

  /** Even the error could not be sent: logged, and the response dropped. */
  private lost(res: Response, err: unknown): void {
    this.logger.error(`JSON-RPC answer failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    res.destroy();
  }

  private answer(res: Response, id: JsonRpcId, ctx: A2aCallContext, outcome: Outcome): void {
    if (outcome.kind === 'json') this.sendJson(res, jsonRpcResult(id, outcome.result), 200, extensionHeaders(ctx));
    else this.sendStream(res, outcome.sse, extensionHeaders(ctx));
  }

  private fail(res: Response, id: JsonRpcId, err: unknown): void {
    if (!isKnownError(err)) this.logger.error(`JSON-RPC request failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    const { status, headers } = jsonRpcHttpStatus(err);
    this.sendJson(res, JSON.stringify({ jsonrpc: '2.0', id, error: toJsonRpcErrorObject(err) }), status, headers);
  }

  /** A streaming send (the method of every stream a client starts) at once, when it can be; any other method in `dispatchAsync`. */
  private dispatch(call: JsonRpcCall, ctx: A2aCallContext, req: Request, res: Response): Outcome | Promise<Outcome> {
    if (call.method !== (ctx.version === '1.0' ? 'SendStreamingMessage' : 'message/stream')) return this.dispatchAsync(call, ctx, req, res);
    const framing = { binding: 'jsonrpc', requestId: call.id } as const;
    const lastEventId = lastEventIdOf(req);
    const request = this.sendRequest(call, ctx);
    const stream =
      request instanceof Promise
        ? request.then((send) => this.a2a.streamMessage(send, ctx, framing, res, lastEventId))
        : this.a2a.streamMessage(request, ctx, framing, res, lastEventId);
    return stream instanceof Promise ? stream.then(streamOutcome) : streamOutcome(stream);
  }

  /** Every method but the streaming send (see `dispatch`). */
  private async dispatchAsync(call: JsonRpcCall, ctx: A2aCallContext, req: Request, res: Response): Promise<Outcome> {
    const framing = { binding: 'jsonrpc', requestId: call.id } as const;
    const lastEventId = lastEventIdOf(req);
    if (PUSH_METHODS.has(call.method)) throw pushNotificationNotSupported();
    if (EXTENDED_CARD_METHODS.has(call.method)) throw unsupportedOperation('This agent has no extended agent card');
    if (ctx.version === '1.0') {
      switch (call.method) {
        case 'SendMessage': {
          const task = await this.a2a.sendMessage(await this.sendRequest(call, ctx), ctx, res);
          return { kind: 'json', result: JSON.stringify(SendMessageResponse.toJSON({ payload: { $case: 'task', value: task } })) };
        }
        case 'GetTask':
          return { kind: 'json', result: this.a2a.taskJson(await this.a2a.getTask(await this.params(call, GetTaskRequestDto), ctx), '1.0') };
        case 'ListTasks':
          return { kind: 'json', result: JSON.stringify(await this.a2a.listTasks(await this.params(call, ListTasksRequestDto), ctx)) };
        case 'CancelTask':
          return { kind: 'json', result: this.a2a.taskJson(await this.a2a.cancelTask(await this.params(call, TaskIdRequestDto), ctx), '1.0') };
        case 'SubscribeToTask':
          return { kind: 'stream', sse: (await this.a2a.subscribe(await this.params(call, TaskIdRequestDto), lastEventId, ctx, framing, res)).sse };
      }
    } else {
      switch (call.method) {
        case 'message/send': {
          const task = await this.a2a.sendMessage(await this.sendRequest(call, ctx), ctx, res);
          return { kind: 'json', result: this.a2a.taskJson(task, '0.3') };
        }
        case 'tasks/get':
          return { kind: 'json', result: this.a2a.taskJson(await this.a2a.getTask(await this.params(call, GetTaskRequestDto), ctx), '0.3') };
        case 'tasks/cancel':
          return { kind: 'json', result: this.a2a.taskJson(await this.a2a.cancelTask(await this.params(call, TaskIdRequestDto), ctx), '0.3') };
        case 'tasks/resubscribe':
          return { kind: 'stream', sse: (await this.a2a.subscribe(await this.params(call, TaskIdRequestDto), lastEventId, ctx, framing, res)).sse };
      }
    }
    throw methodNotFound(call.method, versionHint(call.method, ctx));
  }

  /**
   * The send's params, checked, in the SDK's shape. A 1.0 send of the common shape (proved by the
   * validation pipe's own hand check) is read at once: no promise on every send's path for it.
   */
  private sendRequest(call: JsonRpcCall, ctx: A2aCallContext): SendRequest | Promise<SendRequest> {
    this.messageLimits.transform(call.params);
    if (ctx.version !== '1.0') return this.params(call, MessageSendParamsV03Dto).then((dto) => this.a2a.fromV03(dto));
    if (isCommonSendMessageRequest(call.params)) return this.a2a.fromV1(call.params as SendMessageRequestDto);
    return this.params(call, SendMessageRequestDto).then((dto) => this.a2a.fromV1(dto));
  }

  /** `params` checked against the method's DTO; field errors are -32602 naming each field. */
  private params<T extends object>(call: JsonRpcCall, dto: Type<T>): Promise<T> {
    if (call.params !== undefined && (typeof call.params !== 'object' || call.params === null || Array.isArray(call.params))) {
      throw invalidParams([{ field: 'params', description: 'must be an object' }]);
    }
    return this.validation.transform(call.params ?? {}, { type: 'body', metatype: dto }) as Promise<T>;
  }

  private sendJson(res: Response, body: string, status = 200, headers: Readonly<Record<string, string>> = {}): void {
    res.status(status).set(headers).type('application/json').send(body);
  }

  /**
   * Writes the stream's events as Nest's @Sse would (same framing), each as it comes, paced by
   * this response's drain, so what waits for a slow client stays in the task's log. The headers
   * leave with the events written in the same turn (a stream's first event, its Task or replay,
   * is written as it attaches): one write instead of two per stream; they are flushed alone only
   * for a stream with nothing to send yet. The head is one `writeHead` with every header (the
   * extension headers too), not headers set one by one and merged into it.
   */
  private sendStream(res: Response, sse: TaskSseStream, extensions: Readonly<Record<string, string>>): void {
    res.socket?.setNoDelay(true);
    // The server's socket timeout, if it has one, does not apply to a stream (none by default: nothing to clear).
    if (res.socket?.timeout) res.socket.setTimeout(0);
    res.writeHead(200, streamHead(extensions));
    const wrote = sse.writeTo(res, this.streamFailed);
    if (!wrote && !res.writableEnded) res.flushHeaders();
  }
}

/** The Last-Event-ID header, read as Express's `req.get` reads it without lower-casing its name per request. */
function lastEventIdOf(req: Request): string | undefined {
  return req.headers[LAST_EVENT_ID] as string | undefined;
}

function streamOutcome(stream: TaskStream): Outcome {
  return { kind: 'stream', sse: stream.sse };
}

/** The request object of JSON-RPC 2.0 (one call; A2A defines no batches nor notifications). */
function readCall(body: unknown): JsonRpcCall {
  if (Array.isArray(body)) throw invalidRequest('batch requests are not supported');
  if (typeof body !== 'object' || body === null) throw invalidRequest('the body must be a JSON object (send Content-Type: application/json)');
  const request = body as Record<string, unknown>;
  if (request.jsonrpc !== '2.0') throw invalidRequest('"jsonrpc" must be "2.0"');
  if (!('id' in request)) throw invalidRequest('"id" is required (A2A defines no notifications)');
  const { id, method, params } = request;
  if (id !== null && typeof id !== 'string' && !(typeof id === 'number' && Number.isFinite(id))) {
    throw invalidRequest('"id" must be a string, a number or null');
  }
  if (typeof method !== 'string' || method.length === 0) throw invalidRequest('"method" must be a non-empty string');
  return { id, method, params };
}

/**
 * Whether a hint names the other version: only for that version's real method names. The SDK's
 * lookups use `in`, which also answers for names every object inherits (`toString`, `__proto__`).
 */
function versionHint(method: string, ctx: A2aCallContext): string {
  if (method in Object.prototype) return '';
  if (ctx.version === '0.3' && isV1JsonRpcMethod(method)) return 'an A2A 1.0 method: send the header A2A-Version: 1.0';
  if (ctx.version === '1.0' && isLegacyJsonRpcMethod(method)) return 'an A2A 0.3 method: send A2A-Version: 0.3, or no A2A-Version';
  return '';
}
