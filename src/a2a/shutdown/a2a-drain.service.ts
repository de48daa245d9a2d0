import { Inject, Injectable, Logger, Optional, type BeforeApplicationShutdown } from '@nestjs/common';
import { A2A_CONFIG } from '../a2a.constants';
import type { A2aConfig } from '../a2a.module-definition';
import type { WrittenTask } from '../store/task-store';
import { ClientStreams } from '../streams/client-streams';
import { TaskService } from '../task.service';

/** After the last task is terminal, how long open streams get to send their final event and flush it to the socket. */
const STREAM_FLUSH_MS = 2_000;
const POLL_MS = 10;

export interface DrainReport {
  /** Tasks running when the drain began, or started by a request already past the door. */
  tasks: number;
  /** Of them, those that ended on their own within the drain time. */
  finished: number;
  /** Those cancelled when the drain time was up. */
  cancelled: number;
  /** Client streams still open when the drain gave up waiting for them. */
  openStreams: number;
  durationMs: number;
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * Graceful shutdown of the A2A server: from `drain()` on, every new A2A request is refused
 * (503, see DrainGuard); running tasks get `drainTimeoutMs` to finish, then are cancelled (their
 * open tools fail "cancelled"); each stream sends its task's final event and closes. Resolves
 * when that is done, so the application can close.
 *
 * Triggered through Nest's lifecycle: when the application closes on a signal
 * (`app.enableShutdownHooks()`), `beforeApplicationShutdown` drains before the HTTP server
 * closes. A plain `app.close()` does not wait: the tasks still running are cancelled at once.
 * Signals are the application's business; this module installs no handlers.
 */
@Injectable()
export class A2aDrainService implements BeforeApplicationShutdown {
  private readonly logger = new Logger(A2aDrainService.name);
  private drained?: Promise<DrainReport>;

  constructor(
    private readonly tasks: TaskService,
    @Inject(A2A_CONFIG) private readonly config: A2aConfig,
    @Optional() private readonly clientStreams?: ClientStreams,
  ) {}

  get draining(): boolean {
    return this.drained !== undefined;
  }

  async beforeApplicationShutdown(signal?: string): Promise<void> {
    // A worker that drains takes no new runs; the queue keeps them for the others.
    await this.tasks.stopTakingRuns();
    if (signal !== undefined) await this.drain();
    await this.tasks.close();
  }

  /** Starts the drain (once; later calls get the same result). */
  drain(timeoutMs = this.config.drainTimeoutMs): Promise<DrainReport> {
    this.drained ??= this.run(timeoutMs);
    return this.drained;
  }

  private async run(timeoutMs: number): Promise<DrainReport> {
    const began = Date.now();
    const seen = new Set(this.tasks.running());
    this.logger.log(`draining: ${seen.size} running task(s), up to ${timeoutMs} ms`);
    await this.until(() => this.collect(seen).every((task) => task.isTerminal), timeoutMs);
    const late = this.collect(seen).filter((task) => !task.isTerminal);
    await Promise.all(late.map((task) => this.tasks.cancel(task, 'the server is shutting down')));
    // Each stream's pipeline ends with the final event, then its response must have handed its
    // last bytes to the operating system: closing the server before that would cut them off.
    const flushBy = Date.now() + STREAM_FLUSH_MS;
    await this.until(() => this.tasks.metrics().openStreams === 0, STREAM_FLUSH_MS);
    const unflushed = (await this.clientStreams?.flushed(Math.max(0, flushBy - Date.now()))) ?? 0;
    const report: DrainReport = {
      tasks: seen.size,
      finished: seen.size - late.length,
      cancelled: late.length,
      openStreams: Math.max(this.tasks.metrics().openStreams, unflushed),
      durationMs: Date.now() - began,
    };
    this.logger.log(`drained: ${report.finished} finished, ${report.cancelled} cancelled, ${report.openStreams} stream(s) left open, in ${report.durationMs} ms`);
    return report;
  }

  /** The tasks seen so far plus any a request already past the door has started since. */
  private collect(seen: Set<WrittenTask>): WrittenTask[] {
    for (const task of this.tasks.running()) seen.add(task);
    return [...seen];
  }

  private async until(check: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check() && Date.now() < deadline) await delay(POLL_MS);
  }
}
