/**
 * An HTTP proxy between the browser and the app that acts on event streams like a real
 * network can: it paces their events (so each frame reaches the page on its own, as over a
 * slow link, instead of several landing in one animation frame) and can cut the browser's
 * first stream after some events, the way a dropped connection does, while its side towards
 * the app stays open. What the page must survive by resuming on its own.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StreamProxyOptions {
  /** Delay before each SSE event is passed on (default 0). */
  delayPerEventMs?: number;
  /** Cut the first SendStreamingMessage stream after this many events (default: never). */
  cutAfterEvents?: number;
}

export interface ProxiedRequest {
  method: string;
  path: string;
  rpcMethod?: string;
  lastEventId?: string;
}

export interface StreamProxy {
  url: string;
  requests: ProxiedRequest[];
  /** Events the browser got on the cut stream before it was cut. */
  deliveredBeforeCut: number;
  close(): Promise<void>;
}

function rpcMethodOf(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { method?: unknown };
    return typeof parsed.method === 'string' ? parsed.method : undefined;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function startStreamProxy(target: string, options: StreamProxyOptions = {}): Promise<StreamProxy> {
  const upstream = new URL(target);
  const delay = options.delayPerEventMs ?? 0;
  let cutPending = options.cutAfterEvents !== undefined;
  const proxy: StreamProxy = { url: '', requests: [], deliveredBeforeCut: 0, close: async () => undefined };

  /** Passes an event stream on event by event, paced, optionally cutting it. */
  function relayEvents(upRes: IncomingMessage, res: ServerResponse, cutAfter: number | undefined): void {
    let pending = '';
    let delivered = 0;
    let cut = false;
    // One chain keeps the events in order whatever the pacing.
    let chain = Promise.resolve();
    const pass = (event: string): void => {
      chain = chain.then(async () => {
        if (cut) return;
        if (delay > 0) await sleep(delay);
        res.write(event);
        if (event.startsWith(':')) return; // keep-alive comment
        delivered++;
        if (cutAfter !== undefined && delivered >= cutAfter) {
          cut = true;
          proxy.deliveredBeforeCut = delivered;
          // A FIN without the chunked terminator: the response breaks off mid-stream.
          res.socket?.end();
        }
      });
    };
    upRes.setEncoding('utf8');
    upRes.on('data', (chunk: string) => {
      pending += chunk;
      let end: number;
      while ((end = pending.indexOf('\n\n')) !== -1) {
        pass(pending.slice(0, end + 2));
        pending = pending.slice(end + 2);
      }
    });
    // The app's side of a cut stream is drained to its end: the app never sees the drop.
    upRes.on('end', () => {
      chain = chain.then(() => {
        if (!cut) res.end();
      });
    });
  }

  function forward(req: IncomingMessage, res: ServerResponse, body: Buffer, rpcMethod: string | undefined): void {
    const out = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        if (!String(upRes.headers['content-type']).includes('text/event-stream')) {
          upRes.pipe(res);
          return;
        }
        const cutThis = cutPending && rpcMethod === 'SendStreamingMessage';
        if (cutThis) cutPending = false;
        relayEvents(upRes, res, cutThis ? options.cutAfterEvents : undefined);
      },
    );
    out.on('error', () => res.destroy());
    out.end(body);
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const rpcMethod = rpcMethodOf(body.toString('utf8'));
      const lastEventId = req.headers['last-event-id'];
      proxy.requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        rpcMethod,
        lastEventId: typeof lastEventId === 'string' ? lastEventId : undefined,
      });
      forward(req, res, body, rpcMethod);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}
