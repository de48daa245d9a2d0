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

/** A body being read, in BodyDeadlines' list: when it must have arrived, and what then. */
interface PendingBody {
  due: number;
  expire: () => void;
  listed: boolean;
  prev: PendingBody | undefined;
  next: PendingBody | undefined;
}

/**
 * The bodies still being read, each due `timeoutMs` after it started, with one timer for all:
 * a timer per request (setTimeout, unref, clearTimeout) made Node create and drop its list for
 * that duration on every request when they come one at a time. Every body waits as long, so the
 * list is in the order they are due: added at the tail, expired from the head, removed from
 * anywhere once read. The timer is armed for the head and, when it fires, expires what is due
 * and is armed again for the next one, if any (a body read meanwhile just leaves the list).
 */
export class BodyDeadlines {
  private head: PendingBody | undefined;
  private tail: PendingBody | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly timeoutMs: number) {}

  /** `expire` runs once `timeoutMs` have passed, unless `remove` is called first. */
  add(expire: () => void): PendingBody {
    const body: PendingBody = { due: performance.now() + this.timeoutMs, expire, listed: true, prev: this.tail, next: undefined };
    if (this.tail) this.tail.next = body;
    else this.head = body;
    this.tail = body;
    if (!this.timer) this.arm(this.timeoutMs);
    return body;
  }

  remove(body: PendingBody): void {
    if (!body.listed) return;
    body.listed = false;
    if (body.prev) body.prev.next = body.next;
    else this.head = body.next;
    if (body.next) body.next.prev = body.prev;
    else this.tail = body.prev;
    body.prev = body.next = undefined;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.fire(), ms);
    this.timer.unref();
  }

  private fire(): void {
    this.timer = undefined;
    const now = performance.now();
    try {
      for (let body = this.head; body !== undefined && body.due <= now; body = this.head) {
        this.remove(body);
        body.expire();
      }
    } finally {
      // Armed again even if an `expire` threw. The timer's clock may run a little ahead of this
      // one: a body not quite due yet is expired by the next firing.
      if (this.head) this.arm(Math.max(1, Math.ceil(this.head.due - now)));
    }
  }
}

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
  private readonly deadlines: BodyDeadlines;

  constructor(
    @Inject(A2A_CONFIG) config: A2aConfig,
    private readonly auth: A2aAuthService,
    private readonly errors: A2aPreRouteErrors,
  ) {
    this.limit = config.maxBodyBytes;
    this.maxDepth = config.maxJsonDepth;
    this.timeoutMs = config.bodyTimeoutMs;
    this.deadlines = new BodyDeadlines(this.timeoutMs);
    // Not strict: a JSON scalar is valid JSON, answered as a request that is not an object (-32600).
    this.parse = json({ limit: this.limit, strict: false, type: ['application/json', A2A_JSON_CONTENT_TYPE] });
  }

  use(req: Request, res: Response, next: NextFunction): void {
    this.read(req, res, next, next);
  }

  /**
   * What `use` does, with `then` in place of the `next()` that follows a body read and checked:
   * the JSON-RPC controller reads its body here itself, without Nest's middleware wrappers (an
   * async proxy and a WeakSet of requests per route, and Express's `use` layer, on every
   * request). It runs after Nest's awaits, by when a body that came with its headers (the usual
   * small one) has been received whole: that one is taken from the request's buffer at once,
   * and `then` runs before this returns. Refusals are answered here, or passed to `next`.
   */
  read(req: Request, res: Response, next: NextFunction, then: () => void): void {
    try {
      authenticateOnce(this.auth, req);
    } catch (err) {
      return this.refuse(err, req, res, next);
    }
    const declared = req.headers['content-length'];
    if (Number(declared) > this.limit) return this.refuse(bodyTooLarge(this.limit, LIMIT_OPTION), req, res, next);
    const fast = this.readsItself(req, declared);
    if (fast) {
      const outcome = readBuffered(req, Number(declared));
      if (outcome !== undefined) return this.checked(outcome, req, res, next, then);
    }
    let settled = false;
    // A body already received whole cannot be late: no timer for it.
    const pending = fast && req.complete ? undefined : this.deadlines.add(() => {
      settled = true;
      this.refuse(bodyTimedOut(this.timeoutMs), req, res, next);
    });
    const parsed = (err?: unknown): void => {
      if (pending) this.deadlines.remove(pending);
      // After a timeout the connection is closing and the parser's "aborted" is no news.
      if (settled) return;
      settled = true;
      if (err !== undefined) return this.fail(bodyReadError(err, LIMIT_OPTION), req, res, next);
      if (nestsDeeperThan(req.body, this.maxDepth)) return this.fail(bodyTooDeep(this.maxDepth), req, res, next);
      then();
    };
    if (fast) return readJson(req, Number(declared), parsed);
    // Express's parser skips a body that is already read, and types it does not take.
    void this.parse(req, res, parsed);
  }

  /** A body read at once (readBuffered), as `parsed` in `read` takes one read later. */
  private checked(outcome: BodyOutcome, req: Request, res: Response, next: NextFunction, then: () => void): void {
    if ('error' in outcome) return this.fail(bodyReadError(outcome.error, LIMIT_OPTION), req, res, next);
    req.body = outcome.body;
    if (nestsDeeperThan(req.body, this.maxDepth)) return this.fail(bodyTooDeep(this.maxDepth), req, res, next);
    then();
  }

  private fail(err: unknown, req: Request, res: Response, next: NextFunction): void {
    if (!this.errors.answer(err, req, res)) next(err);
  }

  /** A refusal with the body left unread: answered, then the connection closed, rather than wait for it. */
  private refuse(err: unknown, req: Request, res: Response, next: NextFunction): void {
    res.setHeader('Connection', 'close');
    this.fail(err, req, res, next);
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
    finish(parseJson(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received)));
  };
  const onError = (err: Error): void => finish({ error: { status: 400, message: err.message } });
  const onAborted = (): void => finish({ error: { type: 'request.aborted', status: 400, message: 'request aborted' } });
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onError);
  req.on('aborted', onAborted);
}

/**
 * The body of a request whose buffer holds all of it (its declared length: nothing more can
 * come, though `req.complete` is set by the parser's next callback, which may run after the
 * handler), as readJson would read it: taken from the buffer at once. Undefined, with nothing
 * read, when the buffer does not hold exactly the declared length (an empty body, one still
 * arriving, a stream already flowing).
 */
function readBuffered(req: Request, length: number): BodyOutcome | undefined {
  if (length === 0 || req.readableLength !== length || req.readableFlowing !== null) return undefined;
  const complete = req.complete;
  const data = req.read() as Buffer | null;
  // Not complete yet: flowing, the stream ends (and closes) once the parser's end comes, as a
  // stream read by its 'data' events does; a complete one ends from this read.
  if (!complete) req.resume();
  if (data === null) return undefined;
  if (data.length !== length) return { error: { type: 'request.size.invalid', status: 400, message: 'request size did not match content length' } };
  return parseJson(data);
}

/** A UTF-8 JSON body as Express's parser reads it: its byte order mark dropped, an empty one `{}`. */
function parseJson(data: Buffer): BodyOutcome {
  let text = data.toString('utf8');
  if (text.charCodeAt(0) === BYTE_ORDER_MARK) text = text.slice(1);
  if (text.length === 0) return { body: {} };
  try {
    return { body: JSON.parse(text) };
  } catch (err) {
    return { error: { type: 'entity.parse.failed', status: 400, message: (err as Error).message } };
  }
}
