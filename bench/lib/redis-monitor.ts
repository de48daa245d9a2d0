/**
 * Counts the commands clients send to a redis-server, through MONITOR on a connection of its
 * own: commands run inside a Lua script (logged as `[0 lua]`) are left out, since they cost no
 * round trip. A pipeline of k commands counts k, so the count is an upper bound on round trips.
 * MONITOR slows Redis down: count in a run of its own, never in a timed one.
 */
import Redis from 'ioredis';

export class RedisCommandCounter {
  private clientCommands = 0;
  private scriptCommands = 0;
  /** Client commands by name (lower case), to see which ones a change adds or removes. */
  private byName = new Map<string, number>();

  private constructor(private readonly monitor: Redis & { disconnect(): void }) {}

  static async start(url: string): Promise<RedisCommandCounter> {
    const client = new Redis(url, { maxRetriesPerRequest: 2 });
    const monitor = (await client.monitor()) as unknown as Redis;
    client.disconnect();
    const counter = new RedisCommandCounter(monitor);
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source === 'lua') counter.scriptCommands++;
      else {
        counter.clientCommands++;
        const name = String(args[0] ?? '?').toLowerCase();
        counter.byName.set(name, (counter.byName.get(name) ?? 0) + 1);
      }
    });
    return counter;
  }

  /** Commands clients sent since the last take (this counter's own none), and those scripts ran. */
  take(): { client: number; script: number; byName: Record<string, number> } {
    const byName = Object.fromEntries([...this.byName].sort((a, b) => b[1] - a[1]));
    const taken = { client: this.clientCommands, script: this.scriptCommands, byName };
    this.clientCommands = 0;
    this.scriptCommands = 0;
    this.byName = new Map();
    return taken;
  }

  stop(): void {
    this.monitor.disconnect();
  }
}
