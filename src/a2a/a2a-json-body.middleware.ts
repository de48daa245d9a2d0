import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import { json, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { A2A_CONFIG, A2A_JSON_CONTENT_TYPE } from './a2a.constants';
import type { A2aConfig } from './a2a.module-definition';
import { A2aPreRouteErrors, bodyReadError } from './pre-route-errors';
import { bodyTimedOut, bodyTooDeep, bodyTooLarge } from './a2a-errors';
import { A2aAuthService } from './auth/a2a-auth.service';
import { nestsDeeperThan } from './limits/json-depth';

const LIMIT_OPTION = 'maxBodyBytes';

/**
 * Reads the A2A routes' JSON bodies with Express's own parser (charsets, gzip/deflate/br,
 * size limits counted after inflation): `application/a2a+json` (A2A 1.0's HTTP+JSON type, which
 * an application's JSON parser leaves alone) and `application/json` when the application has
 * no JSON parser. Before a byte of the body is read, the credentials in the headers are checked
 * (401 at once) and a declared length past `maxBodyBytes` is refused; a body that has not
 * arrived within `bodyTimeoutMs` is 408. Each of these answers closes the connection, so an
 * unread or slow body cannot hold the socket. A body nesting deeper than `maxJsonDepth` is
 * refused whoever parsed it. It answers its refusals itself, in the binding's shape (A2aPreRouteErrors).
 */
@Injectable()
export class A2aJsonBodyMiddleware implements NestMiddleware {
  private readonly parse: RequestHandler;
  private readonly limit: number;
  private readonly maxDepth: number;
  private readonly timeoutMs: number;

  constructor(
    @Inject(A2A_CONFIG) config: A2aConfig,
    private readonly auth: A2aAuthService,
    private readonly errors: A2aPreRouteErrors,
  ) {
    this.limit = config.maxBodyBytes;
    this.maxDepth = config.maxJsonDepth;
    this.timeoutMs = config.bodyTimeoutMs;
    // Not strict: a JSON scalar is valid JSON, answered as a request that is not an object (-32600).
    this.parse = json({ limit: this.limit, strict: false, type: ['application/json', A2A_JSON_CONTENT_TYPE] });
  }

  use(req: Request, res: Response, next: NextFunction): void {
    const fail = (err: unknown): void => {
      if (!this.errors.answer(err, req, res)) next(err);
    };
    const refuse = (err: unknown): void => {
      // The body is left unread: answer, then close, rather than wait for it.
      res.setHeader('Connection', 'close');
      fail(err);
    };
    try {
      this.auth.authenticate(req.headers, req.rawHeaders);
    } catch (err) {
      return refuse(err);
    }
    if (Number(req.get('content-length')) > this.limit) return refuse(bodyTooLarge(this.limit, LIMIT_OPTION));
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      refuse(bodyTimedOut(this.timeoutMs));
    }, this.timeoutMs);
    timer.unref();
    // Express's parser skips a body that is already read, and types it does not take.
    void this.parse(req, res, (err?: unknown) => {
      clearTimeout(timer);
      // After a timeout the connection is closing and the parser's "aborted" is no news.
      if (settled) return;
      settled = true;
      if (err !== undefined) return fail(bodyReadError(err, LIMIT_OPTION));
      if (nestsDeeperThan(req.body, this.maxDepth)) return fail(bodyTooDeep(this.maxDepth));
      next();
    });
  }
}
