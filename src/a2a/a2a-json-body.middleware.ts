import { AsyncResource } from 'node:async_hooks';
import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import { json, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { A2A_CONFIG, A2A_JSON_CONTENT_TYPE } from './a2a.constants';
import type { A2aConfig } from './a2a.module-definition';
import { A2aPreRouteErrors, bodyReadError } from './pre-route-errors';
import { bodyTimedOut, bodyTooDeep, bodyTooLarge } from './a2a-errors';
import { authenticateOnce } from './auth/a2a-auth.guard';
import { A2aAuthService } from './auth/a2a-auth.service';
import { nestsDeeperThan } from './limits/json-depth';

const LIMIT_OPTION = 'maxBodyBytes';

/**
 * The Content-Type spellings the fast path reads itself: the two types the parser takes, in
 * UTF-8 (its default charset). Any other spelling, charset or parameter goes to the parser.
 */
const FAST_CONTENT_TYPES = new Set(
  ['application/json', A2A_JSON_CONTENT_TYPE].flatMap((type) => [type, `${type}; charset=utf-8`, `${type};charset=utf-8`]),
);
const BYTE_ORDER_MARK = 0xfeff;

/** What Express's parser reads (body-parser and raw-body's error types and messages, which bodyReadError maps). */
type BodyOutcome = { body: unknown } | { error: { type?: string; status: number; message: string } };

/**
 * Reads the A2A routes' JSON bodies with Express's own parser (charsets, gzip/deflate/br,
 * size limits counted after inflation): `application/a2a+json` (A2A 1.0's HTTP+JSON type, which
 * an application's JSON parser leaves alone) and `application/json` when the application has
 * no JSON parser. Before a byte of the body is read, the credentials in the headers are checked
 * (401 at once) and a declared length past `maxBodyBytes` is refused; a body that has not
 * arrived within `bodyTimeoutMs` is 408. Each of these answers closes the connection, so an
 * unread or slow body cannot hold the socket. A body nesting deeper than `maxJsonDepth` is
 * refused whoever parsed it. It answers its refusals itself, in the binding's shape (A2aPreRouteErrors).
 * The common body (UTF-8 JSON of a declared length, uncompressed) is read here without the
 * parser's machinery, with the parser's results and errors: it is on every request's path.
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
      authenticateOnce(this.auth, req);
    } catch (err) {
      return refuse(err);
    }
    const declared = req.headers['content-length'];
    if (Number(declared) > this.limit) return refuse(bodyTooLarge(this.limit, LIMIT_OPTION));
    const fast = this.readsItself(req, declared);
    let settled = false;
    // A body already received whole cannot be late: no timer for it.
    const timer = fast && req.complete ? undefined : setTimeout(() => {
      settled = true;
      refuse(bodyTimedOut(this.timeoutMs));
    }, this.timeoutMs);
    timer?.unref();
    const parsed = (err?: unknown): void => {
      clearTimeout(timer);
      // After a timeout the connection is closing and the parser's "aborted" is no news.
      if (settled) return;
      settled = true;
      if (err !== undefined) return fail(bodyReadError(err, LIMIT_OPTION));
      if (nestsDeeperThan(req.body, this.maxDepth)) return fail(bodyTooDeep(this.maxDepth));
      next();
    };
    if (fast) return readJson(req, Number(declared), parsed);
    // Express's parser skips a body that is already read, and types it does not take.
    void this.parse(req, res, parsed);
  }

  /**
   * Whether this request's body is one the fast path reads exactly as Express's parser would:
   * unread, of a declared length within the limit, not compressed, UTF-8 JSON of a type the
   * parser takes. Every other body (chunked, gzip, another charset, read already) goes to the parser.
   */
  private readsItself(req: Request, declared: string | undefined): boolean {
    const type = req.headers['content-type'];
    return (
      declared !== undefined &&
      type !== undefined &&
      FAST_CONTENT_TYPES.has(type.toLowerCase()) &&
      req.headers['content-encoding'] === undefined &&
      req.headers['transfer-encoding'] === undefined &&
      req.readable &&
      !req.readableDidRead &&
      req.readableEncoding === null
    );
  }
}

/**
 * Reads and parses a body as Express's JSON parser does for the bodies `readsItself` takes (no
 * inflation, no charset conversion: UTF-8, its byte order mark dropped; an empty body is `{}`),
 * with its errors, so `bodyReadError` answers them alike. `done` runs in the request's async
 * context, as the parser's callback does.
 */
function readJson(req: Request, length: number, done: (err?: unknown) => void): void {
  // As raw-body does (AsyncResource.bind would cost more: it defines properties on the bound function).
  const scope = new AsyncResource('A2aJsonBody');
  const settle = (outcome: BodyOutcome): void => {
    if ('error' in outcome) return done(outcome.error);
    req.body = outcome.body;
    done();
  };
  const finish = (outcome: BodyOutcome): void => {
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onError);
    req.off('aborted', onAborted);
    scope.runInAsyncScope(settle, null, outcome);
  };
  const chunks: Buffer[] = [];
  let received = 0;
  const onData = (chunk: Buffer): void => {
    chunks.push(chunk);
    received += chunk.length;
  };
  const onEnd = (): void => {
    if (received !== length) return finish({ error: { type: 'request.size.invalid', status: 400, message: 'request size did not match content length' } });
    let text = chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks, received).toString('utf8');
    if (text.charCodeAt(0) === BYTE_ORDER_MARK) text = text.slice(1);
    if (text.length === 0) return finish({ body: {} });
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      return finish({ error: { type: 'entity.parse.failed', status: 400, message: (err as Error).message } });
    }
    finish({ body });
  };
  const onError = (err: Error): void => finish({ error: { status: 400, message: err.message } });
  const onAborted = (): void => finish({ error: { type: 'request.aborted', status: 400, message: 'request aborted' } });
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onError);
  req.on('aborted', onAborted);
}
