/**
 * The redis-server of Redis-mode rows: one of the bench's own (free loopback port, temp dir, no
 * persistence), and what it reports: commands processed (an upper bound on round trips, since
 * a pipeline of k commands is one) and memory used.
 */
import Redis from 'ioredis';
import { startRedis, type TestRedis } from '../../test/support/redis-server';

export class BenchRedis {
  private constructor(
    private readonly server: TestRedis,
    private readonly client: Redis,
  ) {}

  get url(): string {
    return this.server.url;
  }

  /** Starts one, or resolves undefined when redis-server is not installed. */
  static async start(): Promise<BenchRedis | undefined> {
    let server: TestRedis;
    try {
      server = await startRedis();
    } catch {
      return undefined;
    }
    const redis = new BenchRedis(server, new Redis(server.url, { lazyConnect: false, maxRetriesPerRequest: 2 }));
    // Asked now, so that no run's count of commands includes the INFO that asks it.
    await redis.processId();
    return redis;
  }

  private async info(section: string, field: string): Promise<number> {
    const text = await this.client.info(section);
    const match = new RegExp(`^${field}:(\\d+)`, 'm').exec(text);
    if (!match) throw new Error(`redis INFO ${section} has no ${field}`);
    return Number(match[1]);
  }

  private pid?: Promise<number>;

  /** The redis-server's process id (its run-queue wait is read from /proc); asked once, at start. */
  processId(): Promise<number> {
    this.pid ??= this.info('server', 'process_id');
    return this.pid;
  }

  /** Commands the server has processed so far (the INFO call itself included). */
  commandsProcessed(): Promise<number> {
    return this.info('stats', 'total_commands_processed');
  }

  usedMemory(): Promise<number> {
    return this.info('memory', 'used_memory');
  }

  /** Empties it between rows, so each starts from the same place. */
  async flush(): Promise<void> {
    await this.client.flushall();
  }

  async stop(): Promise<void> {
    this.client.disconnect();
    await this.server.stop();
  }
}
