import type { ServerResponse } from 'node:http';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { A2A_CONFIG } from '../a2a.constants';
import type { A2aConfig } from '../a2a.module-definition';

/** How a tracked stream is doing: since when its buffer has been full, and the drains seen. */
interface Watch {
  onStalled: () => void;
  fullSince?: number;
  drains: number;
  drainsThen: number;
  stopListening: () => void;
}

const FLUSH_POLL_MS = 10;

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * The event streams open to clients, as HTTP responses: a stream whose client has not read for
 * `stalledStreamTimeoutMs` while its buffer is full is closed (its task goes on; the client
 * resumes with Last-Event-ID), and on shutdown `flushed()` waits until every stream's last
 * bytes have been handed to the operating system.
 */
@Injectable()
export class ClientStreams implements OnModuleDestroy {
  private readonly open = new Map<ServerResponse, Watch>();
  private readonly stalledMs: number;
  private sweeper?: NodeJS.Timeout;
  private stalledClosed = 0;

  constructor(@Inject(A2A_CONFIG) config: Pick<A2aConfig, 'stalledStreamTimeoutMs'>) {
    this.stalledMs = config.stalledStreamTimeoutMs;
  }

  onModuleDestroy(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** Streams closed because their client stopped reading. */
  get stalledStreamsClosed(): number {
    return this.stalledClosed;
  }

  /** Streams whose response has not yet closed. */
  get size(): number {
    return this.open.size;
  }

  /** Watches a stream's response until it closes; `onStalled` closes it when its client stops reading. */
  track(response: ServerResponse, onStalled: () => void): void {
    if (this.open.has(response) || response.destroyed) return;
    const socket = response.socket;
    const onDrain = (): void => {
      watch.drains += 1;
    };
    const watch: Watch = { onStalled, drains: 0, drainsThen: 0, stopListening: () => socket?.off('drain', onDrain) };
    socket?.on('drain', onDrain);
    this.open.set(response, watch);
    // `on`, not `once`: a response closes once (once wraps the listener, with its state, per stream).
    response.on('close', () => this.untrack(response));
    if (!this.sweeper) this.startSweeper();
  }

  /** Not inline in `track`: a closure made there would keep that stream's response (and request, socket) for the sweeper's life. */
  private startSweeper(): void {
    this.sweeper = setInterval(() => this.sweep(), Math.max(10, Math.min(1_000, this.stalledMs / 4)));
    this.sweeper.unref();
  }

  /**
   * Resolves once every stream has ended with its last bytes handed to the operating system (or
   * closed), or when `timeoutMs` is up; with the number of streams still open then.
   */
  async flushed(timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (this.unflushed() > 0 && Date.now() < deadline) await delay(FLUSH_POLL_MS);
    return this.unflushed();
  }

  private unflushed(): number {
    let count = 0;
    for (const response of this.open.keys()) if (!response.writableFinished) count += 1;
    return count;
  }

  private untrack(response: ServerResponse): void {
    this.open.get(response)?.stopListening();
    this.open.delete(response);
  }

  /**
   * A buffer full since the last look, with no drain in between, for stalledMs: the client has
   * stopped reading. The sweeper stops at its first look with no stream open (not as the last
   * one closes: streams one after another would each start and stop a timer).
   */
  private sweep(): void {
    if (this.open.size === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
      return;
    }
    const now = Date.now();
    for (const [response, watch] of [...this.open]) {
      const full = response.writableNeedDrain || response.socket?.writableNeedDrain === true;
      if (!full) {
        watch.fullSince = undefined;
      } else if (watch.fullSince === undefined || watch.drains !== watch.drainsThen) {
        watch.fullSince = now;
        watch.drainsThen = watch.drains;
      } else if (now - watch.fullSince >= this.stalledMs) {
        this.stalledClosed += 1;
        this.untrack(response);
        watch.onStalled();
      }
    }
  }
}
