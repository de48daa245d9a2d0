/**
 * Counts the commands clients send to a redis-server, through MONITOR on a connection of its
 * own: commands run inside a Lua script (logged as `[0 lua]`) are left out, since they cost no
 * round trip. A pipeline of k commands counts k, so the count is an upper bound on round trips.
 * MONITOR slows Redis down: count in a run of its own, never in a timed one.
 */
import Redis from 'ioredis';

/** How a counter names what it counts, beyond the command's name. */
export interface CommandNaming {
  /** EVALSHA named by its script (SHA1 -> name; `evalsha:<first 8 hex>` when unknown), not "evalsha". */
  scripts?: ReadonlyMap<string, string>;
  /** The commands scripts ran counted by name too, as `lua:<name>`. */
  scriptCommandsByName?: boolean;
}

/** What ioredis says of a line that answers no command of its: a MONITOR line come before its "monitoring" state. */
const EARLY_MONITOR_LINE = /^Command queue state error/;

export class RedisCommandCounter {
  private clientCommands = 0;
  private scriptCommands = 0;
  /** Client commands by name (lower case), to see which ones a change adds or removes. */
  private byName = new Map<string, number>();
  /** Counting began (the connection is in MONITOR mode) and has not stopped. */
  private counting = false;
  /** An error of the connection while counting: the counts are not whole, take() throws it. */
  private failure?: Error;

  private constructor(
    private readonly monitor: Redis,
    private readonly naming: CommandNaming,
  ) {}

  static async start(url: string, naming: CommandNaming = {}): Promise<RedisCommandCounter> {
    // A connection of our own in MONITOR mode rather than ioredis's monitor(), which listens for
    // errors only until it resolves: MONITOR's first lines can come in the same read as its OK,
    // before ioredis sets "monitoring", and each is then an error ("Command queue state error")
    // that, unheard, is thrown and ends the process (a full bench run ended so). Those lines are
    // of commands sent before counting began, so they are left out.
    const monitor = new Redis(url, { monitor: true, lazyConnect: true, maxRetriesPerRequest: 2 });
    const counter = new RedisCommandCounter(monitor, naming);
    await new Promise<void>((resolve, reject) => {
      monitor.on('error', (error: Error) => {
        if (counter.counting) counter.failure ??= error;
        else if (!EARLY_MONITOR_LINE.test(error.message)) reject(error);
      });
      monitor.on('monitor', (_time: string, args: string[], source: string) => {
        if (counter.counting) counter.count(args, source);
      });
      monitor.once('monitoring', () => {
        counter.counting = true;
        resolve();
      });
      monitor.connect().catch(reject);
    }).catch((error: unknown) => {
      monitor.disconnect();
      throw error;
    });
    return counter;
  }

  private count(args: string[], source: string): void {
    const name = String(args[0] ?? '?').toLowerCase();
    if (source === 'lua') {
      this.scriptCommands++;
      if (this.naming.scriptCommandsByName) this.add(`lua:${name}`);
      return;
    }
    this.clientCommands++;
    const sha = name === 'evalsha' && this.naming.scripts ? String(args[1]) : undefined;
    this.add(sha === undefined ? name : (this.naming.scripts?.get(sha) ?? `evalsha:${sha.slice(0, 8)}`));
  }

  private add(name: string): void {
    this.byName.set(name, (this.byName.get(name) ?? 0) + 1);
  }

  /** Commands clients sent since the last take (this counter's own none), and those scripts ran. */
  take(): { client: number; script: number; byName: Record<string, number> } {
    if (this.failure) throw new Error(`the MONITOR connection failed while counting: ${this.failure.message}`);
    const byName = Object.fromEntries([...this.byName].sort((a, b) => b[1] - a[1]));
    const taken = { client: this.clientCommands, script: this.scriptCommands, byName };
    this.clientCommands = 0;
    this.scriptCommands = 0;
    this.byName = new Map();
    return taken;
  }

  stop(): void {
    this.counting = false;
    this.monitor.disconnect();
  }
}
