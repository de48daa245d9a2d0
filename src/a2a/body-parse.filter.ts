import { BadRequestException, Catch, type ArgumentsHost } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import type { Request, Response } from 'express';
import { A2A_JSON_CONTENT_TYPE, JSON_RPC_PATH } from './a2a.constants';
import { parseError, toJsonRpcErrorObject, toRestError } from './a2a-errors';

/** A body that is not JSON, found before any route ran. */
export class BodyParseError extends BadRequestException {}

const JSON_RPC_ROUTE = new RegExp(`/${JSON_RPC_PATH}$`);
const REST_BODY_ROUTES = /\/(message:(send|stream)|tasks\/[^/]+:(cancel|subscribe))$/;

/**
 * Malformed JSON is rejected by the body parser before any route runs, so only a global filter
 * sees it. On the A2A routes this one answers in the binding's shape (JSON-RPC -32700, or HTTP
 * 400 with a `google.rpc.Status` body); everywhere else it leaves Nest's answer unchanged. Filters
 * an application registers itself take precedence over this one.
 */
@Catch(BadRequestException)
export class BodyParseFilter extends BaseExceptionFilter {
  override catch(exception: BadRequestException, host: ArgumentsHost): void {
    const req = host.switchToHttp().getRequest<Request>();
    const res = host.switchToHttp().getResponse<Response>();
    // A parser failure leaves the body unset; any other 400 is not ours to reshape.
    const unparsed = exception instanceof BodyParseError || req.body === undefined;
    if (req.method !== 'POST' || !unparsed || res.headersSent) return super.catch(exception, host);
    const error = parseError(exception.message);
    if (JSON_RPC_ROUTE.test(req.path)) {
      res.status(200).json({ jsonrpc: '2.0', id: null, error: toJsonRpcErrorObject(error) });
    } else if (REST_BODY_ROUTES.test(req.path)) {
      const { status, body } = toRestError(error);
      res.status(status).type(A2A_JSON_CONTENT_TYPE).send(JSON.stringify(body));
    } else {
      super.catch(exception, host);
    }
  }
}
