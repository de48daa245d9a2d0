import * as http from 'node:http';
import * as https from 'node:https';
import type { Socket } from 'node:net';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';

interface ExpressPrototypes {
  request: http.IncomingMessage;
  response: http.ServerResponse;
}

/**
 * Nest's ExpressAdapter, except that its HTTP server builds every request and response on the
 * application's own Express prototypes (Node's `IncomingMessage` / `ServerResponse` server
 * options, with classes whose prototypes become `app.request` / `app.response`), so Express's
 * `Object.setPrototypeOf(req, app.request)` per request changes nothing.
 *
 * Why: on Node 20's V8, an object whose prototype is changed and which then gets new
 * properties (Express and its router add `res`, `next`, `baseUrl`, `params`, `locals`...) gets
 * a hidden class of its own, every request. That costs the empty task a third of the framework's
 * CPU and makes the scavenger promote ~9 KB of every request to the old generation (one-off,
 * bench/empty-task-gc.ts --target=floor, docs/performance.md). Everything else is Nest's
 * adapter: the same routing, middleware, filters; `httpsOptions` and `forceCloseConnections`
 * keep their meaning.
 */
export class ExpressPrototypesAdapter extends ExpressAdapter {
  /** The sockets `forceCloseConnections` closes on `close()` (Nest's own set is private). */
  private readonly openSockets = new Set<Socket>();

  override initHttpServer(options: NestApplicationOptions): void {
    const classes = messageClassesOn(this.getInstance<ExpressPrototypes>());
    this.httpServer = options.httpsOptions
      ? https.createServer({ ...options.httpsOptions, ...classes }, this.getInstance())
      : http.createServer(classes, this.getInstance());
    if (options.forceCloseConnections) {
      this.httpServer.on('connection', (socket: Socket) => {
        this.openSockets.add(socket);
        socket.once('close', () => this.openSockets.delete(socket));
      });
    }
  }

  override close(): Promise<unknown> | undefined {
    for (const socket of this.openSockets) socket.destroy();
    this.openSockets.clear();
    return super.close();
  }
}

/**
 * Node's request and response classes, extended once per application, whose prototypes are put
 * in front of Express's (`app.request` / `app.response` become them; they inherit everything
 * Express's had): Express's setPrototypeOf then finds the prototype already in place. Classes
 * rather than functions that call Node's constructors on Express's prototypes: with those, V8
 * sizes the objects for the empty function, and they fall back to dictionary properties (slow
 * lookups) before the handler runs; Reflect.construct with a new target gives every object a
 * hidden class of its own again.
 */
function messageClassesOn(app: ExpressPrototypes): http.ServerOptions {
  class ExpressRequest extends http.IncomingMessage {}
  Object.setPrototypeOf(ExpressRequest.prototype, app.request);
  app.request = ExpressRequest.prototype;
  class ExpressResponse extends http.ServerResponse {}
  Object.setPrototypeOf(ExpressResponse.prototype, app.response);
  app.response = ExpressResponse.prototype;
  return { IncomingMessage: ExpressRequest, ServerResponse: ExpressResponse as typeof http.ServerResponse };
}
