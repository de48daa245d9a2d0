import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { A2A_CONFIG } from '../a2a.constants';
import type { A2aConfig } from '../a2a.module-definition';

/**
 * One tracked stream: since when its buffer has been full, and the drains seen since the sweeper
 * first found it full (it listens for drains only from then on: most streams never fill).
 */
class Watch {
  /** Its index in ClientStreams' list while it is tracked, -1 after. */
  slot = -1;
  fullSince?: number;
  drains = 0;
  drainsThen = 0;
  /** The socket whose drains are counted, once the stream was found full. */
  private socket?: Socket;
  private onDrain?: () => void;

  constructor(
    readonly response: ServerResponse,
    readonly onStalled: () => void,
  ) {}

  countDrains(): void {
    if (this.onDrain) return;
    const socket = this.response.socket;
    if (!socket) return;
    this.socket = socket;
    this.onDrain = () => {
      this.drains += 1;
    };
    socket.on('drain', this.onDrain);
  }

  stopListening(): void {
    if (this.onDrain) this.socket?.off('drain', this.onDrain);
    this.socket = undefined;
    this.onDrain = undefined;
  }
}

const FLUSH_POLL_MS = 10;

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * The event streams open to clients, as HTTP responses: a stream whose client has not read for
 * `stalledStreamTimeoutMs` while its buffer is full is closed (its task goes on; the client
 * resumes with Last-Event-ID), and on shutdown `flushed()` waits until every stream's last
 * bytes have been handed to the operating system.
 *
 * The open streams are the first `count` slots of a list in which each keeps its slot (a
 * closed one's place goes to the last), not a Map by response: a Map that lives as long as the
 * server takes a new table as it empties and fills again, and V8 allocates a long-lived Map's
 * tables in the old generation, so streams opened one after another left one there each. The
 * list keeps its length (popping it empty gives its storage back, and the next push takes new).
 */
@Injectable()
export class ClientStreams implements OnModuleDestroy {
  private readonly open: (Watch | undefined)[] = [];
  private count = 0;
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
    return this.count;
  }

  /**
   * Watches a stream's response until it closes; `onStalled` closes it when its client stops
   * reading. `closed`, if given, runs first on the response's close (one listener for both).
   */
  track(response: ServerResponse, onStalled: () => void, closed?: () => void): void {
    // A response is one stream: the service tracks each once.
    if (response.destroyed) {
      if (closed) response.on('close', closed);
      return;
    }
    const watch = new Watch(response, onStalled);
    watch.slot = this.count;
    this.open[this.count++] = watch;
    // `on`, not `once`: a response closes once (once wraps the listener, with its state, per stream).
    response.on(
      'close',
      closed
        ? () => {
            try {
              closed();
            } finally {
              this.untrack(watch);
            }
          }
        : () => this.untrack(watch),
    );
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
    for (let i = 0; i < this.count; i++) if (!(this.open[i] as Watch).response.writableFinished) count += 1;
    return count;
  }

  private untrack(watch: Watch): void {
    const slot = watch.slot;
    if (slot < 0) return;
    watch.slot = -1;
    watch.stopListening();
    // The last stream takes the closed one's slot.
    const last = this.open[--this.count] as Watch;
    this.open[this.count] = undefined;
    if (last !== watch) {
      this.open[slot] = last;
      last.slot = slot;
    }
  }

  /**
   * A buffer full since the last look, with no drain in between, for stalledMs: the client has
   * stopped reading. The sweeper stops at its first look with no stream open (not as the last
   * one closes: streams one after another would each start and stop a timer).
   */
  private sweep(): void {
    if (this.count === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
      return;
    }
    const now = Date.now();
    // A copy: closing a stalled stream moves another into its slot.
    for (const watch of this.open.slice(0, this.count) as Watch[]) {
      const response = watch.response;
      const full = response.writableNeedDrain || response.socket?.writableNeedDrain === true;
      if (!full) {
        watch.fullSince = undefined;
      } else if (watch.fullSince === undefined || watch.drains !== watch.drainsThen) {
        watch.countDrains();
        watch.fullSince = now;
        watch.drainsThen = watch.drains;
      } else if (now - watch.fullSince >= this.stalledMs) {
        this.stalledClosed += 1;
        this.untrack(watch);
        watch.onStalled();
      }
    }
  }
}
