import { Body, Controller, Get, Header, HttpCode, Logger, Post, Query, RequestMethod, Res, Sse, UseFilters, UseGuards, Headers, VERSION_NEUTRAL, type MessageEvent } from '@nestjs/common';
import type { Observable } from 'rxjs';
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
import { A2aRoute } from './a2a-route';

const REST = { binding: 'rest' } as const;

/**
 * The HTTP+JSON binding. Its two streams are @Sse handlers returning the task's event pipeline:
 * the task's progress and toolframe topics merged into status updates (narration) and artifact
 * updates (tool-call-v1 frames), after the Task and up to the terminal status. As on any Nest
 * route, a host's global interceptors run around them and see their Observable: one that maps
 * results or times out (a TransformInterceptor, a TimeoutInterceptor) must let A2A's routes
 * through (isA2aRoute). The unary handlers answer through their response (@Res()), as the
 * JSON-RPC binding does, so a result-mapping interceptor cannot rewrite their bodies.
 * VERSION_NEUTRAL: a host's URI versioning leaves the routes where A2aModule mounts them (A2A
 * versions itself: A2A-Version and the card).
 */
@Controller({ version: VERSION_NEUTRAL })
@A2aRoute()
@UseGuards(DrainGuard, A2aAuthGuard, RestNegotiationGuard)
@UseFilters(RestExceptionFilter)
export class A2aController {
  private readonly logger = new Logger(A2aController.name);

  constructor(private readonly a2a: A2aService) {}

  @Post(REST_ROUTES.sendMessage)
  @HttpCode(200)
  @Header('Content-Type', A2A_JSON_CONTENT_TYPE)
  async sendMessage(@CallContext() ctx: A2aCallContext, @Body(MessageLimitsPipe, A2aValidationPipe) body: SendMessageRequestDto, @Res() res: Response): Promise<void> {
    res.set(extensionHeaders(ctx));
    const task = await this.a2a.sendMessage(this.a2a.fromV1(body), ctx, res);
    this.send(res, SendMessageResponse.toJSON({ payload: { $case: 'task', value: task } }));
  }

  @Sse(REST_ROUTES.streamMessage, { method: RequestMethod.POST })
  @HttpCode(200)
  async streamMessage(
    @CallContext() ctx: A2aCallContext,
    @Body(MessageLimitsPipe, A2aValidationPipe) body: SendMessageRequestDto,
    @Headers(LAST_EVENT_ID_HEADER) lastEventId: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Observable<MessageEvent>> {
    res.set(extensionHeaders(ctx));
    return (await this.a2a.streamMessage(this.a2a.fromV1(body), ctx, REST, res, lastEventId)).sse.messages();
  }

  @Get(REST_ROUTES.tasks)
  @Header('Content-Type', A2A_JSON_CONTENT_TYPE)
  async listTasks(@CallContext() ctx: A2aCallContext, @Query(A2aValidationPipe) query: ListTasksRequestDto, @Res() res: Response): Promise<void> {
    this.send(res, await this.a2a.listTasks(query, ctx));
  }

  @Get(REST_ROUTES.task)
  @Header('Content-Type', A2A_JSON_CONTENT_TYPE)
  async getTask(@CallContext() ctx: A2aCallContext, @TaskRequestParams(A2aValidationPipe) request: GetTaskRequestDto, @Res() res: Response): Promise<void> {
    this.send(res, Task.toJSON(await this.a2a.getTask(request, ctx)));
  }

  @Post(REST_ROUTES.cancelTask)
  @HttpCode(200)
  @Header('Content-Type', A2A_JSON_CONTENT_TYPE)
  async cancelTask(@CallContext() ctx: A2aCallContext, @TaskRequestParams(A2aValidationPipe) request: TaskIdRequestDto, @Res() res: Response): Promise<void> {
    this.send(res, Task.toJSON(await this.a2a.cancelTask(request, ctx)));
  }

  @Sse(REST_ROUTES.subscribeTask, { method: RequestMethod.POST })
  @HttpCode(200)
  async subscribeTask(
    @CallContext() ctx: A2aCallContext,
    @TaskRequestParams(A2aValidationPipe) request: TaskIdRequestDto,
    @Headers(LAST_EVENT_ID_HEADER) lastEventId: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Observable<MessageEvent>> {
    res.set(extensionHeaders(ctx));
    return (await this.a2a.subscribe(request, lastEventId, ctx, REST, res)).sse.messages();
  }

  /**
   * A unary answer's JSON, with the status and Content-Type the route's decorators set (Express
   * adds the ETag, as it did); not sent when the application answered first (answeredByHost).
   */
  private send(res: Response, body: unknown): void {
    if (!answeredByHost(res, this.logger, 'HTTP+JSON answer')) res.send(JSON.stringify(body));
  }
}
