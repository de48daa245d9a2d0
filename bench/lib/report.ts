/** Turns the results into the printed table, the markdown summary, the chart and the targets. */
import type { ExecutorOverheadResult } from '../sections/executor-overhead';
import type { IdleMemoryRow } from '../sections/idle-memory';
import type { PipelineCostResult } from '../sections/pipeline-cost';
import type { ComparisonRow, TargetFigures } from '../sections/side-by-side';
import type { BenchConfig } from './config';
import type { Target } from './ipc';
import { chartSvg, type Panel } from './svg-chart';

export interface BenchResults {
  meta: {
    date: string;
    node: string;
    cpus: number;
    cpuModel: string;
    quick: boolean;
    reps: number;
    fdLimit: string;
    /** One-minute load average of the machine: above its core count, other work shared the CPUs. */
    loadAverageAtStart: number;
    loadAverageAtEnd?: number;
    durationS?: number;
  };
  pipelineCost?: PipelineCostResult;
  sideBySide?: ComparisonRow[];
  idleMemory?: IdleMemoryRow[];
  executorOverhead?: ExecutorOverheadResult;
  targets?: TargetCheck[];
}

export interface TargetCheck {
  target: string;
  measured: string;
  met: boolean;
}

const COLORS: Record<Target, string> = { toolstream: '#1f77b4', reference: '#d62728', limit: '#7f7f7f' };

const n = (v: number, digits = 0): string =>
  Number.isFinite(v) ? v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '—';
const x = (v: number): string => (Number.isFinite(v) ? (v >= 10 ? `${n(v)}×` : `${n(v, 2)}×`) : '—');

function fig(row: ComparisonRow, target: Target): TargetFigures | undefined {
  return row.figures.find((f) => f.target === target);
}

export function checkTargets(results: BenchResults, config: BenchConfig): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const rows = results.sideBySide ?? [];
  const single1k = rows.find((r) => r.kind === 'single-stream' && r.scenario.toolCalls === 1_000);
  if (single1k) {
    checks.push({
      target: '1,000 tool calls, one stream: ≥ 100× the reference frames/s',
      measured: `${x(single1k.oursOverReference)} (${n(fig(single1k, 'toolstream')?.framesPerSec ?? NaN)} vs ${n(fig(single1k, 'reference')?.framesPerSec ?? NaN)} frames/s)`,
      met: single1k.oursOverReference >= 100,
    });
  }
  const single30k = rows.find((r) => r.kind === 'single-stream' && r.scenario.toolCalls === 30_000);
  if (single30k) {
    checks.push({
      target: '30,000 tool calls, one stream: ≥ ⅓ of the raw-SSE limit, CPU per frame within 3×',
      measured: `${x(single30k.oursOverLimit)} of the limit's frames/s, CPU per frame ${x(single30k.cpuOursOverLimit)} the limit's`,
      met: single30k.oursOverLimit >= 1 / 3 && single30k.cpuOursOverLimit <= 3,
    });
  }
  const latency100 = rows.find((r) => r.kind === 'latency' && r.streams === 100);
  if (latency100) {
    const p99 = fig(latency100, 'toolstream')?.latencyP99Ms ?? NaN;
    checks.push({
      target: `p99 publish-to-client latency < 5 ms at 100 streams (a tool call every ${config.pacedIntervalMs} ms per stream)`,
      measured: `${n(p99, 2)} ms`,
      met: p99 < 5,
    });
  }
  const idle10k = results.idleMemory?.find((r) => r.target === 'toolstream' && r.streams === 10_000);
  if (idle10k) {
    checks.push({
      target: '≤ 64 KiB RSS per open idle stream at 10,000 streams',
      measured: `${n(idle10k.rssPerStreamKiB, 1)} KiB (${n(idle10k.opened)} streams open)`,
      met: idle10k.rssPerStreamKiB <= 64 && idle10k.opened === 10_000,
    });
  }
  const exec = results.executorOverhead;
  if (exec?.length) {
    const worst = exec.reduce((a, b) => (b.overheadPercent > a.overheadPercent ? b : a));
    checks.push({
      target: 'executor overhead ≤ 10 % over the bare LangGraph stream',
      measured: exec.map((r) => `${n(r.overheadPercent, 1)} % (${r.shape})`).join(', '),
      met: worst.overheadPercent <= 10,
    });
  }
  return checks;
}

function table(head: string[], body: string[][]): string {
  return [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...body.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

function rowLabel(row: ComparisonRow): string {
  const pace =
    row.scenario.intervalMs > 0
      ? `, a call every ${row.scenario.intervalMs} ms (${n(row.offeredFramesPerSec ?? NaN)} frames/s offered)`
      : '';
  return `${row.kind} · ${n(row.streams)} stream${row.streams > 1 ? 's' : ''} × ${n(row.scenario.toolCalls)} calls${pace}`;
}

function cell(f: TargetFigures | undefined): string {
  if (!f) return '—';
  const cut = f.cut ? ` (cut at the time limit: ${n(f.framesReceived)} of ${n(f.framesExpected)} frames)` : '';
  const failed = f.failedStreams > 0 ? ` (${n(f.failedStreams)} streams failed: ${f.errors.join('; ')})` : '';
  return `${n(f.framesPerSec)}${cut}${failed}`;
}

export function markdownSummary(results: BenchResults): string {
  const out: string[] = [];
  const m = results.meta;
  out.push(
    `Measured ${m.date} on ${m.cpus} × ${m.cpuModel}, Node ${m.node}, ${m.quick ? 'quick mode, 1 run per figure' : `median of ${m.reps} runs per figure`}, ` +
      `in ${n(m.durationS ?? NaN)} s. Load average ${n(m.loadAverageAtStart, 1)} at the start, ${n(m.loadAverageAtEnd ?? NaN, 1)} at the end ` +
      `(above ${m.cpus}, other work was sharing the CPUs and latency figures suffer first).`,
    '',
  );
  if (results.targets?.length) {
    out.push('### Targets', '', table(['target', 'measured', 'met'], results.targets.map((t) => [t.target, t.measured, t.met ? 'yes' : '**no**'])), '');
  }
  const rows = results.sideBySide ?? [];
  if (rows.length) {
    out.push(
      '### Side by side: frames/s delivered to clients',
      '',
      table(
        ['run', 'toolstream', 'reference (SDK)', 'limit (bare node:http)', 'ours/ref', 'ours/limit', 'CPU/frame ours/limit'],
        rows.map((r) => [rowLabel(r), cell(fig(r, 'toolstream')), cell(fig(r, 'reference')), cell(fig(r, 'limit')), x(r.oursOverReference), x(r.oursOverLimit), x(r.cpuOursOverLimit)]),
      ),
      '',
      '### Publish-to-bytes-received latency, p50 / p99 (ms)',
      '',
      table(
        ['run', 'toolstream', 'reference (SDK)', 'limit (bare node:http)'],
        rows.map((r) => [
          rowLabel(r),
          ...(['toolstream', 'reference', 'limit'] as Target[]).map((t) => {
            const f = fig(r, t);
            return f ? `${n(f.latencyP50Ms, 2)} / ${n(f.latencyP99Ms, 2)}${f.cut ? ' (cut)' : ''}` : '—';
          }),
        ]),
      ),
      '',
    );
  }
  const pipeline = results.pipelineCost;
  if (pipeline) {
    const sizes = [...new Set(pipeline.rows.map((r) => r.toolCallsPerTask))];
    out.push(
      '### Pipeline cost: server CPU per frame (µs), executor event to SSE bytes written',
      '',
      table(
        ['server', ...sizes.map((s) => `${n(s)} calls/task`), 'empty task'],
        Object.keys(pipeline.emptyTaskCpuUs).map((target) => [
          target,
          ...sizes.map((s) => {
            const r = pipeline.rows.find((row) => row.target === target && row.toolCallsPerTask === s);
            return r ? `${n(r.cpuPerFrameUs, 1)} (${n(r.cpuPerFrameAllInUs, 1)} all-in)` : '—';
          }),
          `${n(pipeline.emptyTaskCpuUs[target])} µs`,
        ]),
      ),
      '',
    );
  }
  if (results.idleMemory?.length) {
    out.push(
      '### RSS per open idle stream',
      '',
      table(
        ['server', 'streams', 'open', 'KiB per stream', 'RSS before → open', 'runs'],
        results.idleMemory.map((r) => [
          r.target,
          n(r.streams),
          n(r.opened),
          n(r.rssPerStreamKiB, 1),
          `${n(r.rssBeforeMiB)} → ${n(r.rssOpenMiB)} MiB`,
          n(r.runs),
        ]),
      ),
      '',
    );
  }
  const exec = results.executorOverhead;
  if (exec?.length) {
    out.push(
      '### Full agent run: executor overhead (CPU per run, same agent, ScriptedChatModel, zero-latency tool)',
      '',
      table(
        ['model script', 'tool calls', 'bare LangGraph stream', 'DeepAgentExecutor', 'overhead'],
        exec.map((r) => [r.shape, n(r.toolCalls), `${n(r.bareMsPerRun, 2)} ms`, `${n(r.executorMsPerRun, 2)} ms`, `${n(r.overheadPercent, 1)} %`]),
      ),
      '',
    );
  }
  return out.join('\n');
}

export function chart(results: BenchResults): string | undefined {
  const rows = results.sideBySide ?? [];
  const throughput = rows.filter((r) => r.kind === 'throughput');
  const latency = rows.filter((r) => r.kind === 'latency');
  if (!throughput.length) return undefined;
  const targets: Target[] = ['toolstream', 'reference', 'limit'];
  const series = (source: ComparisonRow[], value: (f: TargetFigures) => number) =>
    targets.map((t) => ({ name: t, color: COLORS[t], values: source.map((r) => (fig(r, t) ? value(fig(r, t) as TargetFigures) : NaN)) }));
  const panels: Panel[] = [
    {
      title: `frames/s delivered (${throughput[0].scenario.toolCalls} calls/task)`,
      yLabel: 'frames/s (log)',
      xLabel: 'concurrent streams',
      xLabels: throughput.map((r) => n(r.streams)),
      series: series(throughput, (f) => f.framesPerSec),
    },
  ];
  if (latency.length) {
    panels.push({
      title: `p99 latency (a call every ${latency[0].scenario.intervalMs} ms/stream)`,
      yLabel: 'publish → received, ms (log)',
      xLabel: 'concurrent streams',
      xLabels: latency.map((r) => n(r.streams)),
      series: series(latency, (f) => f.latencyP99Ms),
    });
  }
  return chartSvg(panels);
}
