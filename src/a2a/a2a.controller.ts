import { Body, Controller, Get, Header, HttpCode, Logger, Post, Query, Res, UseFilters, UseGuards, Headers, VERSION_NEUTRAL } from '@nestjs/common';
import { SendMessageResponse, Task } from '@a2a-js/sdk';
import type { Response } from 'express';
import { A2A_JSON_CONTENT_TYPE, LAST_EVENT_ID_HEADER, REST_ROUTES } from './a2a.constants';
import { extensionHeaders, type A2aCallContext } from './a2a-call-context';
import { A2aService } from './a2a.service';
import { A2aValidationPipe } from './dto/a2a-validation.pipe';
import { SendMessageRequestDto } from './dto/send-message.dto';
import { GetTaskRequestDto, ListTasksRequestDto, TaskIdRequestDto } from './dto/task-requests.dto';
import { RestExceptionFilter } from './rest-exception.filter';
import { CallContext, RestNegotiationGuard, TaskRequestParams } from './rest-negotiation.guard';
import { A2aAuthGuard } from './auth/a2a-auth.guard';
import { answeredByHost } from './a2a-errors';
import { MessageLimitsPipe } from './limits/message-limits.pipe';
import { DrainGuard } from './shutdown/drain.guard';
import { sendSseStream } from './sse-framing';

const REST = { binding: 'rest' } as const;

/**
 * The HTTP+JSON binding. Every handler answers through its response itself (@Res()), as the
 * JSON-RPC binding does, rather than returning its answer for Nest to send: a host's global
 * interceptor that maps handlers' results (the common TransformInterceptor's `{ data: ... }`)
 * then runs around these routes without rewriting A2A's bodies and frames. Its two streams write
 * the task's event pipeline as the JSON-RPC binding's do (sendSseStream): the task's progress and
 * toolframe topics as status updates (narration) and artifact updates (tool-call-v1 frames),
 * after the Task and up to the terminal status. VERSION_NEUTRAL: a host's URI versioning leaves
 * the routes where A2aModule mounts them (A2A versions itself: A2A-Version and the card).
 */
@Controller({ version: VERSION_NEUTRAL })
@UseGuards(DrainGuard, A2aAuthGuard, RestNegotiationGuard)
@UseFilters(RestExceptionFilter)
export class A2aController {
  private readonly logger = new Logger(A2aController.name);
  private readonly streamFailed = (err: unknown): void => this.logger.error(`stream failed: ${err instanceof Error ? err.message : String(err)}`);

  constructor(private readonly a2a: A2aService) {}

  @Post(REST_ROUTES.sendMessage)
  @HttpCode(200)
  @Header('Content-Type', A2A_JSON_CONTENT_TYPE)
  async sendMessage(@CallContext() ctx: A2aCallContext, @Body(MessageLimitsPipe, A2aValidationPipe) body: SendMessageRequestDto, @Res() res: Response): Promise<void> {
    res.set(extensionHeaders(ctx));
    const task = await this.a2a.sendMessage(this.a2a.fromV1(body), ctx, res);
    if (!answeredByHost(res, this.logger, 'HTTP+JSON answer')) sendJson(res, SendMessageResponse.toJSON({ payload: { $case: 'task', value: task } }));
  }

  @Post(REST_ROUTES.streamMessage)
  @HttpCode(200)
  async streamMessage(
    @CallContext() ctx: A2aCallContext,
    @Body(MessageLimitsPipe, A2aValidationPipe) body: SendMessageRequestDto,
    @Headers(LAST_EVENT_ID_HEADER) lastEventId: string | undefined,
    @Res() res: Response,
  ): Promise<void> {
    const stream = await this.a2a.streamMessage(this.a2a.fromV1(body), ctx, REST, res, lastEventId);
    sendSseStream(res, stream.sse, extensionHeaders(ctx), this.streamFailed);
  }

  @Get(REST_ROUTES.tasks)
  @Header('Content-Type', A2A_JSON_CONTENT_TYPE)
  async listTasks(@CallContext() ctx: A2aCallContext, @Query(A2aValidationPipe) query: ListTasksRequestDto, @Res() res: Response): Promise<void> {
    sendJson(res, await this.a2a.listTasks(query, ctx));
  }

  @Get(REST_ROUTES.task)
  @Header('Content-Type', A2A_JSON_CONTENT_TYPE)
  async getTask(@CallContext() ctx: A2aCallContext, @TaskRequestParams(A2aValidationPipe) request: GetTaskRequestDto, @Res() res: Response): Promise<void> {
    sendJson(res, Task.toJSON(await this.a2a.getTask(request, ctx)));
  }

  @Post(REST_ROUTES.cancelTask)
  @HttpCode(200)
  @Header('Content-Type', A2A_JSON_CONTENT_TYPE)
  async cancelTask(@CallContext() ctx: A2aCallContext, @TaskRequestParams(A2aValidationPipe) request: TaskIdRequestDto, @Res() res: Response): Promise<void> {
    sendJson(res, Task.toJSON(await this.a2a.cancelTask(request, ctx)));
  }

  @Post(REST_ROUTES.subscribeTask)
  @HttpCode(200)
  async subscribeTask(
    @CallContext() ctx: A2aCallContext,
    @TaskRequestParams(A2aValidationPipe) request: TaskIdRequestDto,
    @Headers(LAST_EVENT_ID_HEADER) lastEventId: string | undefined,
    @Res() res: Response,
  ): Promise<void> {
    const stream = await this.a2a.subscribe(request, lastEventId, ctx, REST, res);
    sendSseStream(res, stream.sse, extensionHeaders(ctx), this.streamFailed);
  }
}

/** A unary answer's JSON, with the status and Content-Type the route's decorators set (Express adds the ETag, as it did). */
function sendJson(res: Response, body: unknown): void {
  res.send(JSON.stringify(body));
}
