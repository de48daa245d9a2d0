import { Inject, Injectable, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { ApplicationConfig } from '@nestjs/core/application-config';
import type { NextFunction, Request, Response } from 'express';
import { A2A_CONFIG, A2A_JSON_CONTENT_TYPE, JSON_RPC_PATH } from './a2a.constants';
import type { A2aConfig } from './a2a.module-definition';
import {
  A2aHttpError,
  bodyTooLarge,
  bodyUnreadable,
  echo,
  invalidParams,
  jsonRpcHttpStatus,
  parseError,
  toJsonRpcErrorObject,
  toRestError,
  JsonRpcRequestError,
} from './a2a-errors';
import { requestId } from './json-rpc-exception.filter';

/** What Express's body parser (http-errors) attaches to the errors it raises. */
interface BodyParserError {
  type?: unknown;
  status?: unknown;
  limit?: unknown;
  message?: unknown;
}

/** Said of a limit that is the application's own JSON parser's, not an A2aModule option. */
const APP_PARSER_LIMIT = "the application's JSON parser limit";

/**
 * A body parser's error as the binding's error: too large (413, naming the limit and the option
 * that sets it), unreadable encoding or charset (415), malformed JSON (parse error), anything
 * else about reading the body (400). Anything that is not a body error comes back unchanged.
 */
export function bodyReadError(err: unknown, limitOption = APP_PARSER_LIMIT): unknown {
  if (typeof err !== 'object' || err === null) return err;
  const { type, status, limit, message } = err as BodyParserError;
  const detail = typeof message === 'string' ? message : 'unknown error';
  switch (type) {
    case 'entity.too.large':
      return bodyTooLarge(typeof limit === 'number' ? limit : Number.NaN, limitOption);
    case 'entity.parse.failed':
      return parseError(detail);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return bodyUnreadable(415, detail);
    default:
      return status === 400 ? bodyUnreadable(400, detail) : err;
  }
}

/** What Express's router says of a path parameter it cannot percent-decode. */
const UNDECODABLE_PARAM = /^Failed to decode param '(.*)'$/s;

/** An error met before an A2A route runs, in A2A terms; undefined when it is not one of those. */
function asRequestError(err: unknown): A2aHttpError | JsonRpcRequestError | undefined {
  // Raised by A2aJsonBodyMiddleware or the authentication it runs, already in A2A terms.
  if (err instanceof A2aHttpError || err instanceof JsonRpcRequestError) return err;
  if (err instanceof URIError) {
    const param = UNDECODABLE_PARAM.exec(err.message);
    if (param) return invalidParams([{ field: 'id', description: `is not valid percent-encoding: ${JSON.stringify(echo(param[1]))}` }]);
  }
  const mapped = bodyReadError(err);
  return mapped === err ? undefined : (mapped as A2aHttpError | JsonRpcRequestError);
}

type Binding = 'JSONRPC' | 'HTTP+JSON';

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const trimSlashes = (s: string | undefined): string => (s ?? '').replace(/^\/+|\/+$/g, '');

/**
 * Answers, in the binding's shape, the errors met on A2aModule's own routes before a controller
 * (and so its `@UseFilters`) runs: A2aJsonBodyMiddleware's refusals (credentials, size, time,
 * depth, malformed JSON), the application's own JSON parser failing on an A2A body, a task id
 * that is not valid percent-encoding. JSON-RPC gets a JSON-RPC error object, HTTP+JSON a
 * `google.rpc.Status` body, each with the error's HTTP status and headers.
 *
 * Only requests to the exact A2A routes (method and path, under the global prefix and the
 * module's RouterModule path) are answered here; any other request, and any other error, goes
 * on to the application's own error handling, so its routes keep Nest's answers and its filters.
 */
@Injectable()
export class A2aPreRouteErrors {
  private readonly logger = new Logger('A2aModule');
  private routes: { method: string; path: RegExp; binding: Binding }[] = [];
  /** Whether the application's JSON parser was seen refusing an A2A body under maxBodyBytes (said once). */
  private smallerParserSaid = false;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly appConfig: ApplicationConfig,
    @Inject(A2A_CONFIG) private readonly config: Pick<A2aConfig, 'maxBodyBytes'>,
  ) {}

  /**
   * Learns where the routes are mounted and adds an Express error handler after them (Nest adds
   * its own final one after this). Called from A2aModule.onModuleInit, which Nest runs once the
   * routes are registered; an application without an Express server gets nothing.
   */
  mount(modulePath: string | undefined): void {
    const base = [this.appConfig.getGlobalPrefix(), modulePath].map(trimSlashes).filter((s) => s !== '').join('/');
    const at = (pattern: string): RegExp => new RegExp(`^${base ? `/${escapeRegExp(base)}` : ''}/${pattern}/?$`, 'i');
    this.routes = [
      { method: 'POST', path: at(escapeRegExp(JSON_RPC_PATH)), binding: 'JSONRPC' },
      { method: 'POST', path: at('message:(send|stream)'), binding: 'HTTP+JSON' },
      { method: 'GET', path: at('tasks(/[^/]+)?'), binding: 'HTTP+JSON' },
      { method: 'POST', path: at('tasks/[^/]+:(cancel|subscribe)'), binding: 'HTTP+JSON' },
    ];
    const adapter = this.adapterHost?.httpAdapter;
    if (adapter?.getType() !== 'express') return;
    // Four parameters: Express calls it only with an error.
    adapter.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
      if (!this.answer(err, req, res)) next(err);
    });
  }

  /** Answers the error when the request is to an A2A route and the error one met before its controller; false otherwise. */
  answer(err: unknown, req: Request, res: Response): boolean {
    if (res.headersSent) return false;
    const path = req.originalUrl.split('?')[0];
    const binding = this.routes.find((r) => r.method === req.method && r.path.test(path))?.binding;
    const error = binding && asRequestError(err);
    if (!error) return false;
    this.sayIfParserSmaller(err);
    if (binding === 'JSONRPC') {
      const { status, headers } = jsonRpcHttpStatus(error);
      res.status(status).set(headers).json({ jsonrpc: '2.0', id: requestId(req.body), error: toJsonRpcErrorObject(error) });
    } else {
      const { status, body } = toRestError(error);
      res.status(status).set(error instanceof A2aHttpError ? error.headers : {}).type(A2A_JSON_CONTENT_TYPE).send(JSON.stringify(body));
    }
    return true;
  }

  /**
   * The application's own JSON parser reads A2A bodies before A2aModule does, so its limit
   * (Nest's default parser: 100kb) caps them when it is under maxBodyBytes: the host's setting
   * then refuses messages maxBodyBytes allows. Said once, as a warning naming both settings.
   */
  private sayIfParserSmaller(err: unknown): void {
    if (this.smallerParserSaid) return;
    const { type, limit } = err as BodyParserError;
    if (type !== 'entity.too.large' || typeof limit !== 'number' || limit >= this.config.maxBodyBytes) return;
    this.smallerParserSaid = true;
    this.logger.warn(
      `the application's JSON body parser refused an A2A request at its limit of ${limit} bytes, below maxBodyBytes (${this.config.maxBodyBytes}): ` +
        `A2A messages between the two are refused. Raise its limit (app.useBodyParser('json', { limit: ${this.config.maxBodyBytes} })) ` +
        `or leave A2A bodies to A2aModule (NestFactory.create(AppModule, { bodyParser: false }))`,
    );
  }
}
