/**
 * An HTTP proxy in front of the app that cuts the browser's first event stream after a given
 * number of SSE events, the way a network drop does, while its side towards the app stays
 * open: what the page must survive by resuming on its own.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxiedRequest {
  method: string;
  path: string;
  rpcMethod?: string;
  lastEventId?: string;
}

export interface DropProxy {
  url: string;
  requests: ProxiedRequest[];
  /** Events the browser got on the stream before it was cut. */
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

export async function startDropProxy(target: string, cutAfterEvents: number): Promise<DropProxy> {
  const upstream = new URL(target);
  const requests: ProxiedRequest[] = [];
  let cutDone = false;
  const proxy: DropProxy = { url: '', requests, deliveredBeforeCut: 0, close: async () => undefined };

  function forward(req: IncomingMessage, res: ServerResponse, body: Buffer, cutThis: boolean): void {
    const out = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        if (!cutThis) {
          upRes.pipe(res);
          return;
        }
        let pending = '';
        let delivered = 0;
        upRes.setEncoding('utf8');
        upRes.on('data', (chunk: string) => {
          if (delivered >= cutAfterEvents) return; // the browser is gone; drain the app's side
          pending += chunk;
          let end: number;
          while (delivered < cutAfterEvents && (end = pending.indexOf('\n\n')) !== -1) {
            res.write(pending.slice(0, end + 2));
            pending = pending.slice(end + 2);
            if (!pending.startsWith(':')) delivered++;
          }
          if (delivered >= cutAfterEvents) {
            proxy.deliveredBeforeCut = delivered;
            // A FIN without the chunked terminator: the response breaks off mid-stream.
            res.socket?.end();
          }
        });
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
      requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        rpcMethod,
        lastEventId: typeof lastEventId === 'string' ? lastEventId : undefined,
      });
      const cutThis = !cutDone && rpcMethod === 'SendStreamingMessage';
      if (cutThis) cutDone = true;
      forward(req, res, body, cutThis);
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
