/**
 * A scripted agent worker on the AgentBus: it serves `agent.skill.request` the way the runtime
 * does (progress, tool frames, reply on the task's topics; cancel closes open tools as
 * `failed: "cancelled"` and replies "cancelled"), but from a script, so tests and benchmarks
 * control exactly what happens and when.
 */
import type { ToolCallArtifactData } from '../../src/extensions';
import { AgentBus, type SkillRequest } from '../../src/runtime';
import type { Subscription } from 'rxjs';

export class RunCancelled extends Error {
  constructor(readonly reason: string) {
    super(`run cancelled: ${reason}`);
  }
}

/** One run of the script: what it publishes goes to the run's topics. */
export class ScriptedRun {
  private readonly abort = new AbortController();
  private readonly openTools = new Map<string, string>();
  private step = 0;
  settled = false;

  constructor(
    private readonly bus: AgentBus,
    readonly request: SkillRequest,
  ) {}

  get id(): string {
    return this.request.correlationId;
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  progress(text: string): void {
    this.publish(() => this.bus.publish('progress', this.id, { text, step: this.step++ }));
  }

  frame(frame: ToolCallArtifactData): void {
    if (frame.phase === 'started') this.openTools.set(frame.toolCallId, frame.name);
    else this.openTools.delete(frame.toolCallId);
    this.publish(() => this.bus.publish('toolframe', this.id, { frame }));
  }

  started(toolCallId: string, name: string, args?: unknown): void {
    this.frame({ toolCallId, name, phase: 'started', args, timestamp: new Date().toISOString() });
  }

  completed(toolCallId: string, name: string, result?: unknown): void {
    this.frame({ toolCallId, name, phase: 'completed', result, timestamp: new Date().toISOString() });
  }

  failed(toolCallId: string, name: string, error: string): void {
    this.frame({ toolCallId, name, phase: 'failed', error, timestamp: new Date().toISOString() });
  }

  /** A piece of the answer as it is written (see AnswerPayload). */
  answer(text: string, append: boolean, last = false): void {
    this.publish(() => this.bus.publish('answer', this.id, { text, append, last }));
  }

  reply(text: string): void {
    this.settle(() => this.bus.publish('reply', this.id, { status: 'completed', text }));
  }

  fail(error: string): void {
    this.settle(() => this.bus.publish('reply', this.id, { status: 'failed', error }));
  }

  /** Waits, or throws RunCancelled as soon as the run is cancelled. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.abort.signal.aborted) return reject(new RunCancelled(String(this.abort.signal.reason)));
      const timer = setTimeout(resolve, ms);
      this.abort.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          reject(new RunCancelled(String(this.abort.signal.reason)));
        },
        { once: true },
      );
    });
  }

  /** What the runtime does on cancel: abort, close the open tools, reply "cancelled". */
  cancel(reason: string): void {
    if (this.settled) return;
    this.abort.abort(reason);
    for (const [toolCallId, name] of [...this.openTools]) this.failed(toolCallId, name, 'cancelled');
    this.settle(() => this.bus.publish('reply', this.id, { status: 'cancelled', reason }));
  }

  /** Stops the script without publishing anything (a worker that went away). */
  halt(): void {
    if (!this.abort.signal.aborted) this.abort.abort('the worker stopped');
  }

  private publish(send: () => void): void {
    if (!this.settled) send();
  }

  /** Replies once; a script still sleeping then stops (its sleep throws RunCancelled). */
  private settle(send: () => void): void {
    if (this.settled) return;
    send();
    this.settled = true;
    if (!this.abort.signal.aborted) this.abort.abort('the run has settled');
  }
}

export type Script = (run: ScriptedRun) => Promise<void> | void;

export class ScriptedWorker {
  readonly runs = new Map<string, ScriptedRun>();
  readonly cancels: { correlationId: string; reason?: string }[] = [];
  private readonly subscriptions: Subscription[] = [];
  private readonly waiting: ((run: ScriptedRun) => void)[] = [];

  constructor(
    private readonly bus: AgentBus,
    public script: Script,
  ) {}

  start(): this {
    this.subscriptions.push(
      this.bus.requests$().subscribe((request) => this.run(request)),
      this.bus.cancels$().subscribe((cancel) => {
        this.cancels.push(cancel);
        this.runs.get(cancel.correlationId)?.cancel(cancel.reason ?? 'cancelled');
      }),
    );
    return this;
  }

  /** Leaves the bus; runs still going stop silently, as if the worker process had died. */
  stop(): void {
    for (const sub of this.subscriptions.splice(0)) sub.unsubscribe();
    for (const run of this.runs.values()) run.halt();
  }

  /** The next run to start (or the one that just did, if a test asks after the fact). */
  nextRun(): Promise<ScriptedRun> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private run(request: SkillRequest): void {
    const run = new ScriptedRun(this.bus, request);
    this.runs.set(request.correlationId, run);
    this.waiting.shift()?.(run);
    Promise.resolve()
      .then(() => this.script(run))
      .catch((err: unknown) => {
        if (!(err instanceof RunCancelled)) run.fail(err instanceof Error ? err.message : String(err));
      });
  }
}
