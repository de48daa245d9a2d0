import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP relay in front of a redis-server whose replies the test can hold: an instance connected
 * through it has its commands run by Redis at once, but learns nothing of them while they are
 * held. The instance's appender keeps one call in flight, so holding the replies freezes Redis
 * between two of its calls (what another instance reads meanwhile is what Redis then holds).
 */
export interface RedisReplyGate {
  url: string;
  /** From now on the replies wait here. */
  hold(): void;
  /**
   * The replies that waited go on; the ones after them wait. When none waits yet (Redis ran the
   * call, and the test learnt it on a connection of its own, before its reply reached this relay),
   * the first to come goes on: passing nothing would hold that reply for good.
   */
  pass(): Promise<void>;
  /** The replies that waited go on, and the ones after them too. */
  release(): void;
  close(): Promise<void>;
}

/** How long `pass` waits for a reply to come when none waits. */
const PASS_WAIT_MS = 5_000;

export async function startRedisReplyGate(redisPort: number): Promise<RedisReplyGate> {
  let held = false;
  const waiting: { socket: Socket; chunk: Buffer }[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(redisPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (held) waiting.push({ socket: client, chunk });
      else client.write(chunk);
    });
    const close = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    hold: () => {
      held = true;
    },
    pass: async () => {
      for (let waited = 0; waiting.length === 0; waited += 5) {
        if (waited >= PASS_WAIT_MS) throw new Error(`no reply came to pass in ${PASS_WAIT_MS} ms`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      for (const { socket, chunk } of waiting.splice(0)) if (!socket.destroyed) socket.write(chunk);
    },
    release: () => {
      held = false;
      for (const { socket, chunk } of waiting.splice(0)) if (!socket.destroyed) socket.write(chunk);
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
