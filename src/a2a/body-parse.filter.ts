import { BadRequestException, Catch, type ArgumentsHost } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import type { Request, Response } from 'express';
import { A2A_JSON_CONTENT_TYPE, JSON_RPC_PATH } from './a2a.constants';
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

const JSON_RPC_ROUTE = new RegExp(`/${JSON_RPC_PATH}$`);
const REST_ROUTES = /\/(message:(send|stream)|tasks(\/[^/]+)?)$/;
/** What Express says (Nest turning its URIError into a BadRequestException) of a path it cannot percent-decode. */
const UNDECODABLE_PARAM = /^Failed to decode param '(.*)'$/s;

/**
 * Errors met before any A2A route runs, while the body is read (by the application's parser or
 * A2aJsonBodyMiddleware) or the path is decoded: only a global filter sees them. On the A2A
 * routes this one answers in the binding's shape (JSON-RPC error object, or HTTP+JSON
 * `google.rpc.Status` body, with the error's HTTP status); everywhere else, and for any other
 * error, Nest's answer is unchanged. Filters an application registers itself take precedence.
 */
@Catch()
export class BodyParseFilter extends BaseExceptionFilter {
  override catch(exception: unknown, host: ArgumentsHost): void {
    const req = host.switchToHttp().getRequest<Request>();
    const res = host.switchToHttp().getResponse<Response>();
    const error = this.asRequestError(exception, req);
    if (!error || res.headersSent) return super.catch(exception, host);
    if (JSON_RPC_ROUTE.test(req.path) && req.method === 'POST') {
      const { status, headers } = jsonRpcHttpStatus(error);
      res.status(status).set(headers).json({ jsonrpc: '2.0', id: requestId(req.body), error: toJsonRpcErrorObject(error) });
    } else if (REST_ROUTES.test(req.path)) {
      const { status, body } = toRestError(error);
      res.status(status).set(error instanceof A2aHttpError ? error.headers : {}).type(A2A_JSON_CONTENT_TYPE).send(JSON.stringify(body));
    } else {
      super.catch(exception, host);
    }
  }

  private asRequestError(exception: unknown, req: Request): A2aHttpError | JsonRpcRequestError | undefined {
    // Raised by A2aJsonBodyMiddleware, already in A2A terms.
    if (exception instanceof A2aHttpError || exception instanceof JsonRpcRequestError) return exception;
    if (exception instanceof BadRequestException) {
      const param = UNDECODABLE_PARAM.exec(exception.message);
      if (param) return invalidParams([{ field: 'id', description: `is not valid percent-encoding: ${JSON.stringify(echo(param[1]))}` }]);
      // Nest turns the application parser's SyntaxError into a BadRequestException; a parser
      // failure leaves the body of a POST unset, and any other 400 is not ours to reshape.
      return req.method === 'POST' && req.body === undefined ? parseError(exception.message) : undefined;
    }
    const mapped = bodyReadError(exception);
    return mapped === exception ? undefined : (mapped as A2aHttpError | JsonRpcRequestError);
  }
}
