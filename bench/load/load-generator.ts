/**
 * The load: a child process of its own (so its CPU is not the server's), on loopback only,
 * bounded in count (the job's streams) and in time (the job's limit, after which every open
 * stream is destroyed). Opens the streams as A2A 1.0 JSON-RPC SendStreamingMessage calls,
 * counts events and frames, and measures each frame's publish-to-bytes-received latency.
 */
import { Agent, request, type ClientRequest } from 'node:http';
import { TOOL_CALL_V1_EXTENSION_URI } from '../../src/extensions';
import type { LoadCommand, LoadReply } from '../lib/ipc';
import { FRAMES_PER_TOOL_CALL, nowUs, scenarioText } from '../lib/scenario';
import { percentile } from '../lib/stats';
import type { LatencyPhase, LoadJob, LoadResult } from './load-types';
import { SseFrameReader } from './sse-frame-reader';

/** Connections being set up at once; more would overflow the server's accept queue. */
const CONNECTING_AT_ONCE = 256;
const MAX_ERRORS_KEPT = 5;
const LOOPBACK = /^http:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?\//;

const MESSAGE_ID_SLOT = 'message-id-slot';
/** Every message has an id of its own across jobs and load processes. */
const RUN_PREFIX = `bench-${process.pid}-${Date.now().toString(36)}`;
let sentMessages = 0;

type Outcome = 'completed' | 'failed' | 'cut';

interface StreamHandle {
  request?: ClientRequest;
  outcome?: Outcome;
}

class LoadRun {
  private readonly agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  private readonly handles: StreamHandle[] = [];
  private readonly readers: SseFrameReader[] = [];
  private readonly latenciesUs: number[] = [];
  private readonly phaseLatenciesUs: Record<LatencyPhase, number[]> = { first: [], middle: [], last: [] };
  private readonly errors = new Set<string>();
  private bytes = 0;
  /** Completed streams that did not carry exactly the frames their scenario publishes. */
  private wrongFrameCounts = 0;
  private startedUs = 0;
  private startedCpu?: NodeJS.CpuUsage;
  private endedUs = 0;
  private settledCount = 0;
  private firstFrameCount = 0;
  /** Streams that have received their first bytes (the server has taken them on). */
  private answered = 0;
  /**
   * Latency is sampled once every stream of the run is open: while the server is still taking
   * on the others (a burst of new requests), the frames of the first ones wait behind that
   * work, which is connection ramp-up, not the steady state the figure describes.
   */
  private steady = false;
  private nextToOpen = 0;
  private connecting = 0;
  private open = 0;
  private timer?: NodeJS.Timeout;
  /** The request body around its messageId, which is unique per stream (a repeated one is an idempotent retry). */
  private readonly bodyHead: string;
  private readonly bodyTail: string;

  constructor(
    private readonly job: LoadJob,
    /** Called once every stream is settled (run jobs) or has its first frame (idle jobs). */
    private readonly onDone: () => void,
  ) {
    if (!LOOPBACK.test(job.url)) throw new Error(`the load only targets loopback, not ${job.url}`);
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendStreamingMessage',
      params: { message: { messageId: MESSAGE_ID_SLOT, role: 'ROLE_USER', parts: [{ text: scenarioText(job.scenario) }] } },
    });
    const slot = body.indexOf(MESSAGE_ID_SLOT);
    this.bodyHead = body.slice(0, slot);
    this.bodyTail = body.slice(slot + MESSAGE_ID_SLOT.length);
  }

  start(): void {
    this.startedUs = nowUs();
    this.startedCpu = process.cpuUsage();
    this.timer = setTimeout(() => this.cutAll(), this.job.timeLimitMs);
    this.openMore();
  }

  private openMore(): void {
    const maxOpen = this.job.maxOpen ?? this.job.streams;
    while (this.connecting < CONNECTING_AT_ONCE && this.open < maxOpen && this.nextToOpen < this.job.streams) {
      this.openStream(this.nextToOpen++);
    }
  }

  private openStream(index: number): void {
    this.open++;
    const handle: StreamHandle = {};
    this.handles[index] = handle;
    const reader = new SseFrameReader((us) => {
      if (!this.steady) return;
      this.latenciesUs.push(us);
      this.phaseLatenciesUs[this.phaseOf(reader.stats.frames)].push(us);
    });
    this.readers[index] = reader;
    this.connecting++;
    let connected = false;
    const connectedNow = (): void => {
      if (connected) return;
      connected = true;
      this.connecting--;
      this.openMore();
    };
    const req = request(this.job.url, {
      method: 'POST',
      agent: this.agent,
      headers: {
        'Content-Type': 'application/json',
        Accept: 'text/event-stream',
        'A2A-Version': '1.0',
        'A2A-Extensions': TOOL_CALL_V1_EXTENSION_URI,
      },
    });
    handle.request = req;
    req.on('error', (err) => {
      connectedNow();
      this.settle(handle, 'failed', err.message);
    });
    req.on('response', (res) => {
      connectedNow();
      const type = String(res.headers['content-type'] ?? '');
      if (res.statusCode !== 200 || !type.startsWith('text/event-stream')) {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c.slice(0, 300)));
        res.on('end', () => this.settle(handle, 'failed', `HTTP ${res.statusCode} ${type}: ${text.slice(0, 300)}`));
        return;
      }
      res.setEncoding('utf8');
      let answered = false;
      res.on('data', (chunk: string) => {
        const receivedUs = nowUs();
        if (!answered) {
          answered = true;
          this.onAnswered();
        }
        this.bytes += chunk.length;
        const before = reader.stats.frames;
        reader.push(chunk, receivedUs);
        if (before === 0 && reader.stats.frames > 0) this.onFirstFrame();
      });
      res.on('end', () => {
        if (reader.stats.error !== undefined) this.settle(handle, 'failed', reader.stats.error);
        else if (!this.job.scenario.idle && !handle.outcome && !reader.stats.completed) this.settle(handle, 'failed', 'the stream ended without the task\'s COMPLETED status');
        else {
          const expected = this.job.scenario.toolCalls * FRAMES_PER_TOOL_CALL;
          if (!this.job.scenario.idle && !handle.outcome && reader.stats.frames !== expected) this.wrongFrameCounts++;
          this.settle(handle, 'completed');
        }
      });
      res.on('error', (err) => this.settle(handle, 'failed', err.message));
    });
    req.end(`${this.bodyHead}${RUN_PREFIX}-${++sentMessages}${this.bodyTail}`);
  }

  /** Where the n-th frame (from 1) of a stream falls in its task (see LatencySummary.byPhase). */
  private phaseOf(n: number): LatencyPhase {
    const frames = this.job.scenario.toolCalls * FRAMES_PER_TOOL_CALL;
    return n <= frames / 10 ? 'first' : n > frames - frames / 10 ? 'last' : 'middle';
  }

  private onAnswered(): void {
    this.answered++;
    if (this.answered >= Math.min(this.job.streams, this.job.maxOpen ?? this.job.streams)) this.steady = true;
  }

  private onFirstFrame(): void {
    this.firstFrameCount++;
    if (this.job.scenario.idle && this.firstFrameCount === this.job.streams) {
      clearTimeout(this.timer);
      this.endedUs = nowUs();
      this.onDone();
    }
  }

  private settle(handle: StreamHandle, outcome: Outcome, error?: string): void {
    if (handle.outcome) return;
    handle.outcome = outcome;
    if (error !== undefined && this.errors.size < MAX_ERRORS_KEPT) this.errors.add(error);
    this.settledCount++;
    if (handle.request) this.open--;
    this.openMore();
    if (this.settledCount === this.job.streams && !this.job.scenario.idle) {
      clearTimeout(this.timer);
      this.endedUs = nowUs();
      this.onDone();
    }
  }

  /** The time limit: every stream still open is destroyed and counted as cut. */
  private cutAll(): void {
    this.nextToOpen = this.job.streams;
    const idle = this.job.scenario.idle;
    for (let i = 0; i < this.job.streams; i++) {
      const handle = this.handles[i] ?? (this.handles[i] = {});
      if (handle.outcome) continue;
      if (!idle) handle.request?.destroy();
      this.settle(handle, 'cut');
    }
    if (idle) {
      this.endedUs = nowUs();
      this.onDone();
    }
  }

  /** Closes every stream (idle jobs end this way). */
  close(): void {
    clearTimeout(this.timer);
    for (const handle of this.handles) handle?.request?.destroy();
    this.agent.destroy();
  }

  private phaseSummary(phase: LatencyPhase): { count: number; p99Ms: number } {
    const l = this.phaseLatenciesUs[phase];
    return { count: l.length, p99Ms: percentile(l, 99) / 1000 };
  }

  result(): LoadResult {
    const count = (o: Outcome): number => this.handles.filter((h) => h?.outcome === o).length;
    let events = 0;
    let frames = 0;
    let checkedFrames = 0;
    let invalidFrames = 0;
    for (const r of this.readers) {
      if (!r) continue;
      events += r.stats.events;
      frames += r.stats.frames;
      checkedFrames += r.stats.checkedFrames;
      invalidFrames += r.stats.invalidFrames;
    }
    const elapsedMs = ((this.endedUs || nowUs()) - this.startedUs) / 1000;
    const l = this.latenciesUs;
    const cpu = process.cpuUsage(this.startedCpu);
    return {
      streams: this.job.streams,
      completed: count('completed'),
      failed: count('failed'),
      cut: count('cut'),
      errors: [...this.errors],
      events,
      frames,
      checkedFrames,
      invalidFrames,
      wrongFrameCounts: this.wrongFrameCounts,
      bytes: this.bytes,
      elapsedMs,
      framesPerSec: frames / (elapsedMs / 1000),
      eventsPerSec: events / (elapsedMs / 1000),
      clientCpuUs: cpu.user + cpu.system,
      latency: {
        count: l.length,
        p50Ms: percentile(l, 50) / 1000,
        p99Ms: percentile(l, 99) / 1000,
        maxMs: percentile(l, 100) / 1000,
        byPhase: {
          first: this.phaseSummary('first'),
          middle: this.phaseSummary('middle'),
          last: this.phaseSummary('last'),
        },
      },
    };
  }
}

function reply(message: LoadReply): void {
  process.send?.(message);
}

let current: LoadRun | undefined;

process.on('message', (command: LoadCommand) => {
  if (command.type === 'run') {
    const run: LoadRun = new LoadRun(command.job, () => {
      const result = run.result();
      if (command.job.scenario.idle) {
        reply({ type: 'opened', result });
      } else {
        run.close();
        reply({ type: 'result', result });
      }
    });
    current = run;
    run.start();
  } else {
    current?.close();
    current = undefined;
    reply({ type: 'closed' });
  }
});
process.on('disconnect', () => process.exit(0));
reply({ type: 'ready' });
