import { Catch, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { fromNest, isKnownError, jsonRpcHttpStatus, toJsonRpcErrorObject } from './a2a-errors';
import type { JsonRpcId } from './sse-framing';

/** The request's id when the body has a usable one; else null, as JSON-RPC 2.0 says. */
export function requestId(body: unknown): JsonRpcId {
  const id = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as { id?: unknown }).id : undefined;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

/**
 * Errors raised before the JSON-RPC handler runs (its guards: drain, authentication) as JSON-RPC
 * error responses with the error's HTTP status (401, 503) and headers; the handler catches its own.
 * A host's own refusals on the route (its global guards and interceptors throw Nest's
 * HttpException: 403, 429...) keep their status and message (see hostRefusal).
 */
@Catch()
export class JsonRpcExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(JsonRpcExceptionFilter.name);

  catch(caught: unknown, host: ArgumentsHost): void {
    const exception = fromNest(caught);
    const req = host.switchToHttp().getRequest<Request>();
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) {
      res.end();
      return;
    }
    if (!isKnownError(exception)) {
      this.logger.error(`JSON-RPC request failed: ${exception instanceof Error ? (exception.stack ?? exception.message) : String(exception)}`);
    }
    const { status, headers } = jsonRpcHttpStatus(exception);
    res.status(status).set(headers).json({ jsonrpc: '2.0', id: requestId(req.body), error: toJsonRpcErrorObject(exception) });
  }
}
