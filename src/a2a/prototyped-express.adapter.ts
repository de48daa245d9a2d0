import { IncomingMessage, ServerResponse, createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Application } from 'express';

/**
 * Nest's ExpressAdapter, with one difference: its HTTP server builds each request and response
 * on the Express application's own prototypes (`app.request`, `app.response`, through Node's
 * `IncomingMessage` / `ServerResponse` server options), instead of Node's. Express moves every
 * request and response onto those prototypes as it receives them (`Object.setPrototypeOf`, twice
 * per request), which V8 makes costly for the objects and for the garbage collector (a bare
 * node:http server doing the same: more CPU per request, and about four times the bytes
 * surviving each young-generation collection). Built on them already, the objects are the same
 * and Express's move does nothing. Everything else (routing, middleware, guards, filters,
 * `forceCloseConnections`, HTTPS) is the ExpressAdapter's.
 */
export class PrototypedExpressAdapter extends ExpressAdapter {
  override initHttpServer(options?: NestApplicationOptions): void {
    // Express's request and response prototypes (untyped in @types/express).
    const app = this.getInstance<Application & { request: object; response: object }>();
    const classes = { IncomingMessage: onPrototype(IncomingMessage, app.request), ServerResponse: onPrototype(ServerResponse, app.response) };
    this.httpServer = options?.httpsOptions ? createHttpsServer({ ...options.httpsOptions, ...classes }, app) : createServer(classes, app);
    // As ExpressAdapter.initHttpServer does (the method is private to it in Nest 11).
    if (options?.forceCloseConnections) (this as unknown as { trackOpenConnections(): void }).trackOpenConnections();
  }
}

/** A constructor that builds `base`'s instances with `prototype` as theirs (`base` still runs). */
function onPrototype<C extends abstract new (...args: never[]) => object>(base: C, prototype: object): C {
  function Built(...args: unknown[]): object {
    return Reflect.construct(base, args, Built) as object;
  }
  Built.prototype = prototype;
  return Built as unknown as C;
}
