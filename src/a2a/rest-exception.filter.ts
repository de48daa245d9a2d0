import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { A2A_JSON_CONTENT_TYPE } from './a2a.constants';
import { isKnownError, toRestError } from './a2a-errors';

/**
 * HTTP+JSON errors as A2A 1.0 section 11.6 has them: the status of the spec's table and a
 * `google.rpc.Status` body with `google.rpc.ErrorInfo` (A2A errors) or `BadRequest` (fields).
 * An unexpected error is logged and answered 500 "Internal error", without its stack.
 */
@Catch()
export class RestExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(RestExceptionFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) {
      res.end();
      return;
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      res.status(status).type(A2A_JSON_CONTENT_TYPE).send(
        JSON.stringify({ error: { code: status, status: status === 404 ? 'NOT_FOUND' : 'INVALID_ARGUMENT', message: exception.message, details: [] } }),
      );
      return;
    }
    if (!isKnownError(exception)) {
      this.logger.error(`HTTP+JSON request failed: ${exception instanceof Error ? (exception.stack ?? exception.message) : String(exception)}`);
    }
    const { status, body } = toRestError(exception);
    res.status(status).type(A2A_JSON_CONTENT_TYPE).send(JSON.stringify(body));
  }
}
