import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { Counter, Gauge, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import { TaskService, type A2aMetrics } from '../a2a';
import { EXECUTOR_TOOLS } from '../executor';
import { AgentRuntimeService, type ToolCallOutcome } from '../runtime';
import { DurationHistogram, type DurationSeries } from './duration-histogram';
import type { MetricsSettings } from './interfaces/metrics-module-options.interface';
import { METRICS_SETTINGS } from './metrics.constants';
import { ToolLabels } from './tool-labels';

/** Terminal task states, as `state` label values; each series exists from the start (at 0). */
const TERMINAL_STATES = ['completed', 'failed', 'canceled', 'rejected'];
const OUTCOMES: ToolCallOutcome['outcome'][] = ['completed', 'failed'];

interface ToolSeries {
  labels: { tool: string; outcome: string };
  calls: number;
  /** The histogram's series of this label set, made once. */
  duration: DurationSeries;
}

/**
 * The toolstream metrics, in a prom-client registry of this module's own (unless the options
 * name one). Read from the existing seams: the A2A side's TaskService.metrics() at scrape time,
 * and each ended tool call from the runtime that ran it. Either side may be absent (an
 * api-only or worker-only process): its metrics then stay at zero.
 */
@Injectable()
export class ToolstreamMetrics implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(ToolstreamMetrics.name);
  readonly registry: Registry;
  private readonly owned: string[] = [];
  private tasks?: TaskService;
  private labels: ToolLabels;
  private stopCounting?: () => void;
  private readonly toolCalls: Counter<'tool' | 'outcome'>;
  private readonly toolDuration: DurationHistogram;
  /** Each tool series, by tool label and outcome: its label set and its calls so far. */
  private readonly series = new Map<string, Record<ToolCallOutcome['outcome'], ToolSeries>>();

  constructor(
    @Inject(METRICS_SETTINGS) private readonly settings: MetricsSettings,
    private readonly moduleRef: ModuleRef,
  ) {
    this.registry = settings.registry ?? new Registry();
    this.labels = new ToolLabels(settings.toolNames);
    const registers = [this.registry];
    const a2a = (): A2aMetrics | undefined => this.tasks?.metrics();

    const series = this.series;
    // Counted per call in a plain number, read at scrape time: one prom-client update per call
    // (the histogram's) instead of two, each of which hashes the label set.
    this.toolCalls = this.own(
      new Counter({
        name: 'toolstream_tool_calls_total',
        help: 'Tool calls ended, by tool and outcome (completed or failed).',
        labelNames: ['tool', 'outcome'],
        registers,
        collect() {
          this.reset();
          for (const byOutcome of series.values()) for (const outcome of OUTCOMES) this.inc(byOutcome[outcome].labels, byOutcome[outcome].calls);
        },
      }),
    );
    // Observed once per tool call, in plain numbers (see DurationHistogram).
    this.toolDuration = this.own(
      new DurationHistogram(
        'toolstream_tool_call_duration_seconds',
        'Duration of tool calls, from the started frame to the completed or failed frame.',
        settings.toolDurationBuckets,
        registers,
      ),
    );
    this.own(
      new Counter({
        name: 'toolstream_tasks_total',
        help: 'Tasks that reached a terminal state, by state.',
        labelNames: ['state'],
        registers,
        collect() {
          const finished = a2a()?.finishedTasks ?? {};
          this.reset();
          for (const state of new Set([...TERMINAL_STATES, ...Object.keys(finished)])) this.inc({ state }, finished[state] ?? 0);
        },
      }),
    );
    this.own(
      new Gauge({
        name: 'toolstream_open_streams',
        help: 'Event streams open to clients.',
        registers,
        collect() {
          this.set(a2a()?.openStreams ?? 0);
        },
      }),
    );
    this.own(
      new Gauge({
        name: 'toolstream_live_tasks',
        help: 'Tasks not yet in a terminal state.',
        registers,
        collect() {
          this.set(a2a()?.liveTasks ?? 0);
        },
      }),
    );
    this.own(
      new Counter({
        name: 'toolstream_frames_total',
        help: 'tool-call-v1 frames accepted into tasks.',
        registers,
        collect() {
          this.reset();
          this.inc(a2a()?.frames ?? 0);
        },
      }),
    );
    this.own(
      new Counter({
        name: 'toolstream_rejected_frames_total',
        help: 'tool-call-v1 frames rejected by validation (logged, not forwarded).',
        registers,
        collect() {
          this.reset();
          this.inc(a2a()?.rejectedFrames ?? 0);
        },
      }),
    );
    this.own(
      new Counter({
        name: 'toolstream_stalled_streams_closed_total',
        help: 'Streams closed because their client stopped reading (buffer full past stalledStreamTimeoutMs); their tasks go on.',
        registers,
        collect() {
          this.reset();
          this.inc(a2a()?.stalledStreamsClosed ?? 0);
        },
      }),
    );
    // A host registry may already hold them (prom-client refuses a metric name twice).
    if (settings.defaultMetrics && !this.registry.getSingleMetric('process_cpu_user_seconds_total')) {
      collectDefaultMetrics({ register: this.registry });
    }
  }

  onApplicationBootstrap(): void {
    // The executor's tools are the label values (ExecutorModule is not global: looked up here).
    const tools = this.find<StructuredToolInterface[]>(EXECUTOR_TOOLS) ?? [];
    this.labels = new ToolLabels([...tools.map((tool) => tool.name), ...this.settings.toolNames]);
    this.zeroToolSeries();
    this.tasks = this.find(TaskService);
    const runtime = this.find(AgentRuntimeService);
    this.stopCounting = runtime?.onToolCall((name, outcome, seconds) => this.countToolCall(name, outcome, seconds));
  }

  onModuleDestroy(): void {
    this.stopCounting?.();
    // A registry of the host's outlives this module: take back what was put in it.
    if (this.settings.registry) for (const name of this.owned) this.registry.removeSingleMetric(name);
  }

  /** One ended tool call; its name becomes a label only if it is a registered tool's. */
  recordToolCall(call: ToolCallOutcome): void {
    this.countToolCall(call.name, call.outcome, call.seconds);
  }

  private countToolCall(name: string, outcome: ToolCallOutcome['outcome'], seconds: number): void {
    const tool = this.labels.label(name);
    // Every series exists from the start (zeroToolSeries): its label object is made once, not per call.
    const series = (this.series.get(tool) ?? this.addToolSeries(tool))[outcome];
    series.calls++;
    series.duration.observe(seconds);
  }

  /** The Prometheus text exposition of the registry. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  private zeroToolSeries(): void {
    this.series.clear();
    for (const tool of this.labels.values()) this.addToolSeries(tool);
  }

  /** A tool's series, at zero (label values are bounded by ToolLabels, so the series are too). */
  private addToolSeries(tool: string): Record<ToolCallOutcome['outcome'], ToolSeries> {
    const series = (outcome: ToolCallOutcome['outcome']): ToolSeries => {
      const labels = { tool, outcome };
      return { labels, calls: 0, duration: this.toolDuration.series(labels) };
    };
    const byOutcome = { completed: series('completed'), failed: series('failed') };
    this.series.set(tool, byOutcome);
    return byOutcome;
  }

  private own<M extends Metric | DurationHistogram>(metric: M): M {
    this.owned.push((metric as unknown as { name: string }).name);
    return metric;
  }

  private find<T>(token: (abstract new (...args: never[]) => T) | symbol | string): T | undefined {
    try {
      return this.moduleRef.get<T>(token as symbol, { strict: false });
    } catch {
      this.logger.debug(`${String(typeof token === 'function' ? token.name : token)} is not in this application: its metrics stay at zero`);
      return undefined;
    }
  }
}
