import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import { A2aJsonBodyMiddleware, BodyDeadlines } from './a2a-json-body.middleware';
import type { A2aConfig } from './a2a.module-definition';
import type { A2aAuthService } from './auth/a2a-auth.service';
import type { A2aPreRouteErrors } from './pre-route-errors';
import { JsonRpcRequestError } from './a2a-errors';

describe('BodyDeadlines', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('expires each body timeoutMs after it was added, in order, with one timer for all', () => {
    const deadlines = new BodyDeadlines(1_000);
    const expired: string[] = [];
    deadlines.add(() => expired.push('a'));
    jest.advanceTimersByTime(400);
    deadlines.add(() => expired.push('b'));
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(599);
    expect(expired).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(expired).toEqual(['a']);
    jest.advanceTimersByTime(399);
    expect(expired).toEqual(['a']);
    jest.advanceTimersByTime(1);
    expect(expired).toEqual(['a', 'b']);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('never expires a body removed before its time, wherever it is in the list; the others still expire', () => {
    const deadlines = new BodyDeadlines(1_000);
    const expired: string[] = [];
    const a = deadlines.add(() => expired.push('a'));
    jest.advanceTimersByTime(100);
    const b = deadlines.add(() => expired.push('b'));
    jest.advanceTimersByTime(100);
    deadlines.add(() => expired.push('c'));
    jest.advanceTimersByTime(100);
    const d = deadlines.add(() => expired.push('d'));
    deadlines.remove(b);
    deadlines.remove(a);
    deadlines.remove(d);
    deadlines.remove(a);
    jest.advanceTimersByTime(2_000);
    expect(expired).toEqual(['c']);
    // The list is empty: the timer is not armed again.
    expect(jest.getTimerCount()).toBe(0);
    deadlines.add(() => expired.push('e'));
    jest.advanceTimersByTime(1_000);
    expect(expired).toEqual(['c', 'e']);
  });

  it('is armed again when an expiry throws, so the bodies after it still expire', () => {
    const deadlines = new BodyDeadlines(1_000);
    const expired: string[] = [];
    deadlines.add(() => {
      throw new Error('refusing failed');
    });
    jest.advanceTimersByTime(10);
    deadlines.add(() => expired.push('b'));
    expect(() => jest.advanceTimersByTime(990)).toThrow('refusing failed');
    jest.advanceTimersByTime(10);
    expect(expired).toEqual(['b']);
  });
});

/** What one request's read did: whether `then` ran before `read` returned, the body, the error answered, the request's ending. */
interface ReadSeen {
  thenRan?: 'at once' | 'later';
  body?: unknown;
  answered?: unknown;
  ended: Promise<void>;
  closed: Promise<void>;
}

describe('A2aJsonBodyMiddleware.read (the JSON-RPC handler reads its body with it)', () => {
  let server: Server;
  let seen: ReadSeen[];
  const config = { maxBodyBytes: 1024, maxJsonDepth: 4, bodyTimeoutMs: 5_000 } as A2aConfig;
  const auth = { authenticate: () => undefined } as unknown as A2aAuthService;
  const errors = {
    answer: (err: unknown, _req: Request, res: Response) => {
      seen[seen.length - 1].answered = err;
      res.statusCode = 400;
      res.end();
      return true;
    },
  } as unknown as A2aPreRouteErrors;
  const body = new A2aJsonBodyMiddleware(config, auth, errors);

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const entry: ReadSeen = {
        ended: new Promise((resolve) => req.once('end', resolve)),
        closed: new Promise((resolve) => req.once('close', resolve)),
      };
      seen.push(entry);
      // As Nest's route handler runs: a few microtasks after the request's headers.
      void Promise.resolve()
        .then(() => undefined)
        .then(() => {
          let returned = false;
          const next = ((err?: unknown) => {
            throw new Error(`next(${String(err)}): no error should get past the answer`);
          }) as NextFunction;
          body.read(req as Request, res as Response, next, () => {
            entry.thenRan = returned ? 'later' : 'at once';
            entry.body = (req as Request).body;
            res.end('ok');
          });
          returned = true;
        });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => (seen = []));

  /** Sends a JSON body: with its headers in one write, or the headers first and the body a little later. */
  const send = (text: string, split = false): Promise<number> =>
    new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: (server.address() as AddressInfo).port, method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      if (!split) return void req.end(text);
      req.flushHeaders();
      setTimeout(() => req.end(text), 50);
    });

  it('takes a body that came with its headers from the buffer at once; the request still ends and closes', async () => {
    expect(await send('{"jsonrpc":"2.0","id":1,"method":"m"}')).toBe(200);
    expect(seen[0]).toMatchObject({ thenRan: 'at once', body: { jsonrpc: '2.0', id: 1, method: 'm' } });
    await seen[0].ended;
    await seen[0].closed;
  });

  it('waits for a body that comes after its headers, and reads it as it arrives', async () => {
    expect(await send('\ufeff{"a":[1,2]}', true)).toBe(200);
    expect(seen[0]).toMatchObject({ thenRan: 'later', body: { a: [1, 2] } });
    await seen[0].closed;
  });

  it('answers a malformed body as a parse error and one nested too deep as too deep, read at once or later', async () => {
    for (const split of [false, true]) {
      seen = [];
      expect(await send('{"a":', split)).toBe(400);
      expect(await send('[[[[[1]]]]]', split)).toBe(400);
      expect(seen.map((entry) => entry.thenRan)).toEqual([undefined, undefined]);
      expect(seen[0].answered).toBeInstanceOf(JsonRpcRequestError);
      expect((seen[0].answered as JsonRpcRequestError).code).toBe(-32700);
      expect((seen[1].answered as Error).message).toBe('The request body nests arrays and objects deeper than 4 levels (maxJsonDepth)');
    }
  });
});
