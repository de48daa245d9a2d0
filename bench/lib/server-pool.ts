import type { LoadJob, LoadResult } from '../load/load-types';
import type { Target } from './ipc';
import { LoadProcess, ServerProcess } from './processes';
import type { Scenario } from './scenario';

/**
 * Warm-up before any figure, until the JIT has compiled each server's hot path: a few thousand
 * frames, over several tasks. The reference gets fewer (it delivers ~1,000 frames/s at best).
 */
function warmUp(target: Target): Pick<LoadJob, 'streams' | 'maxOpen' | 'scenario' | 'timeLimitMs'> {
  const toolCalls = target === 'reference' ? 50 : 500;
  return { streams: 20, maxOpen: 4, scenario: { toolCalls, intervalMs: 0, idle: false }, timeLimitMs: 60_000 };
}

export interface MeasuredRun {
  target: Target;
  result: LoadResult;
  /** Server CPU (user + system) spent during the run, in µs. */
  serverCpuUs: number;
}

/**
 * One warm server process per target, started on first use and shared by the runs of a
 * section. A run that was cut leaves work behind in the server (the reference never aborts a
 * run whose client left), so that server is replaced before the next run.
 */
export class ServerPool {
  private readonly servers = new Map<Target, ServerProcess>();

  /** @param profileDir when set, toolstream's server writes a CPU profile there */
  constructor(
    readonly load: LoadProcess,
    private readonly profileDir?: string,
  ) {}

  async server(target: Target): Promise<ServerProcess> {
    let server = this.servers.get(target);
    if (!server) {
      server = await ServerProcess.start(target, target === 'toolstream' ? this.profileDir : undefined);
      this.servers.set(target, server);
      const warm = await this.load.run({ url: server.url, ...warmUp(target) });
      if (warm.completed !== warm.streams) {
        throw new Error(`${target} failed its warm-up: ${warm.errors.join('; ') || `${warm.cut} streams cut`}`);
      }
    }
    return server;
  }

  /** Runs one load job against a target and measures the server's CPU during it. */
  async run(target: Target, streams: number, scenario: Scenario, timeLimitMs: number, maxOpen?: number): Promise<MeasuredRun> {
    const server = await this.server(target);
    const before = await server.cpuUs();
    const result = await this.load.run({ url: server.url, streams, maxOpen, scenario, timeLimitMs });
    const serverCpuUs = (await server.cpuUs()) - before;
    if (result.cut > 0 || result.failed > 0) await this.retire(target);
    // A few failed streams under load are a finding, reported with the figures; all of them
    // failing means the server under test is broken, and no figure from it would mean anything.
    if (result.failed === streams) throw new Error(`${target}: every stream failed: ${result.errors.join('; ')}`);
    return { target, result, serverCpuUs };
  }

  async retire(target: Target): Promise<void> {
    const server = this.servers.get(target);
    this.servers.delete(target);
    await server?.stop();
  }

  async stopAll(): Promise<void> {
    for (const target of [...this.servers.keys()]) await this.retire(target);
  }
}
