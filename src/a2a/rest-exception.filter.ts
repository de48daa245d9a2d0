import { Catch, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { A2A_JSON_CONTENT_TYPE } from './a2a.constants';
import { A2aHttpError, fromNest, isKnownError, toRestError } from './a2a-errors';

/**
 * HTTP+JSON errors as A2A 1.0 section 11.6 has them: the status of the spec's table and a
 * `google.rpc.Status` body with `google.rpc.ErrorInfo` (A2A errors) or `BadRequest` (fields).
 * Refusals about the HTTP exchange (401, 503) carry their headers (WWW-Authenticate, Retry-After).
 * An unexpected error is logged and answered 500 "Internal error", without its stack.
 */
@Catch()
export class RestExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(RestExceptionFilter.name);

  catch(caught: unknown, host: ArgumentsHost): void {
    // Nest's own (an unknown path's 404) and the host's refusals (a global guard's 403, a throttler's 429).
    const exception = fromNest(caught);
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) {
      res.end();
      return;
    }
    if (!isKnownError(exception)) {
      this.logger.error(`HTTP+JSON request failed: ${exception instanceof Error ? (exception.stack ?? exception.message) : String(exception)}`);
    }
    const { status, body } = toRestError(exception);
    if (exception instanceof A2aHttpError) res.set(exception.headers);
    res.status(status).type(A2A_JSON_CONTENT_TYPE).send(JSON.stringify(body));
  }
}
