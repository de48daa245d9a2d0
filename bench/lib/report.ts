/** Turns the results into the markdown report, the chart and the target checks. */
import type { CurvesResult } from '../sections/curves';
import type { EmptyTaskResult } from '../sections/empty-task';
import type { ExecutorOverheadResult } from '../sections/executor-overhead';
import type { IdleMemoryRow } from '../sections/idle-memory';
import type { ComparisonRow, TargetFigures } from '../sections/side-by-side';
import type { TaskMemoryResult } from '../sections/task-memory';
import type { BenchConfig } from './config';
import { EMPTY_TASK_TARGETS, TARGETS, type Target } from './ipc';
import type { SectionReport, SectionTarget } from './section';
import type { Spread } from './stats';
import { chartSvg, type Panel, type Point } from './svg-chart';
import type { Validity } from './validity';

export interface SectionMeta {
  name: string;
  durationS: number;
  loadAverageAtStart: number;
  loadAverageAtEnd: number;
}

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
    sections: SectionMeta[];
    /** Sections skipped because the run was past its --budget-min. */
    skipped?: string[];
    /** The error that stopped a section, when one did (the run is then incomplete). */
    failure?: string;
  };
  validity?: Validity;
  emptyTask?: EmptyTaskResult;
  curves?: CurvesResult;
  sideBySide?: ComparisonRow[];
  idleMemory?: IdleMemoryRow[];
  taskMemory?: TaskMemoryResult;
  executorOverhead?: ExecutorOverheadResult;
  extra?: Record<string, SectionReport>;
  targets?: SectionTarget[];
}

const COLORS: Record<Target, string> = {
  toolstream: '#1f77b4',
  'toolstream-redis': '#2ca02c',
  reference: '#d62728',
  'reference-per-call': '#ff7f0e',
  limit: '#555555',
  floor: '#9467bd',
};

const LABELS: Record<Target, string> = {
  toolstream: 'toolstream',
  'toolstream-redis': 'toolstream, Redis store',
  reference: 'reference (SDK, artifact per frame)',
  'reference-per-call': 'reference (SDK, artifact per call)',
  limit: 'limit (bare node:http)',
  floor: 'framework floor (NestJS + Express, the limit’s handler)',
};

export const n = (v: number, digits = 0): string =>
  Number.isFinite(v) ? v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '—';
const x = (v: number): string => (Number.isFinite(v) ? (v >= 10 ? `${n(v)}×` : `${n(v, 2)}×`) : '—');

/** "median [min – max]", or the one value of a single repetition. */
export function sp(s: Spread | undefined, digits = 0, unit = ''): string {
  if (!s || !Number.isFinite(s.median)) return '—';
  if (s.reps.length <= 1 || s.min === s.max) return `${n(s.median, digits)}${unit}`;
  return `${n(s.median, digits)}${unit} [${n(s.min, digits)} – ${n(s.max, digits)}]`;
}

function spx(s: Spread | undefined): string {
  if (!s || !Number.isFinite(s.median)) return '—';
  if (s.reps.length <= 1 || s.min === s.max) return x(s.median);
  return `${x(s.median)} [${x(s.min)} – ${x(s.max)}]`;
}

const repsOf = (s: Spread, digits: number, unit = ''): string => s.reps.map((v) => `${n(v, digits)}${unit}`).join(', ');

function target(name: string, s: Spread | undefined, higherIsBetter: boolean, bound: number, digits: number, unit = ''): SectionTarget | undefined {
  if (!s || s.reps.length === 0) return undefined;
  const w = higherIsBetter ? s.min : s.max;
  return {
    target: name,
    worst: `${n(w, digits)}${unit}`,
    reps: repsOf(s, digits, unit),
    met: Number.isFinite(w) && (higherIsBetter ? w >= bound : w <= bound) && s.reps.every((v) => Number.isFinite(v)),
  };
}

/** How each server of the empty-task section was warmed, for its description (older results: nothing). */
function warmUpText(empty: EmptyTaskResult): string {
  const warm = EMPTY_TASK_TARGETS.flatMap((t) => {
    const w = empty.warmUp?.[t];
    return w ? [`${LABELS[t].split(' (')[0]} ${n(w.tasks)}${w.steady ? '' : ' (still falling at its end)'}`] : [];
  });
  if (warm.length === 0) return '';
  return `, after each server was warmed with the same number of uncounted empty tasks (${warm.join(', ')})`;
}

export function checkTargets(results: BenchResults, config: BenchConfig): SectionTarget[] {
  const checks: Array<SectionTarget | undefined> = [];
  checks.push(target('empty task: server CPU ≤ 2× the limit’s', results.emptyTask?.oursOverLimit, false, 2, 2, '×'));
  const thousand = results.sideBySide?.find((r) => r.kind === 'throughput' && r.streams === 1_000);
  checks.push(target('1,000 concurrent streams: ≥ 0.7× the limit’s frames/s', thousand?.oursOverLimit, true, 0.7, 2, '×'));
  const curve30k = results.curves?.ratios.find((r) => r.toolCalls === 30_000);
  checks.push(target('one stream, 30,000 tool calls per task: ≥ 0.85× the limit’s frames/s', curve30k?.oursOverLimit, true, 0.85, 2, '×'));
  const exec = results.executorOverhead;
  if (exec?.length) {
    const all = exec.flatMap((r) => r.overheadPercent.reps);
    const worst = Math.max(...all);
    checks.push({
      target: `executor overhead ≤ 10 % over the bare LangGraph stream (worst of ${config.executorReps} repetitions × ${exec.length} agent shapes)`,
      worst: `${n(worst, 1)} %`,
      reps: exec.map((r) => `${r.shape}: ${repsOf(r.overheadPercent, 1, ' %')}`).join('; '),
      met: worst <= 10 && config.executorReps >= 5,
    });
  }
  const latency100 = results.sideBySide?.find((r) => r.kind === 'latency' && r.streams === 100);
  const p99 = latency100?.figures.find((f) => f.target === 'toolstream')?.latencyP99Ms;
  checks.push(target(`p99 publish-to-client latency < 5 ms at 100 streams (a tool call every ${config.pacedIntervalMs} ms per stream)`, p99, false, 5, 2, ' ms'));
  const idle = results.idleMemory?.find((r) => r.target === 'toolstream');
  const idleCheck = target(`≤ 64 KiB RSS per open idle stream at ${n(config.idleStreams)} streams`, idle?.rssPerStreamKiB, false, 64, 1, ' KiB');
  if (idleCheck && idle) idleCheck.met = idleCheck.met && idle.openedMin === idle.streams;
  checks.push(idleCheck);
  const curve1k = results.curves?.ratios.find((r) => r.toolCalls === 1_000);
  if (curve1k && curve1k.redisOverInMemory.reps.length) {
    checks.push(target('Redis store, one stream at 1,000 tool calls per task: ≥ 0.5× in-memory frames/s', curve1k.redisOverInMemory, true, 0.5, 2, '×'));
    // Round trips per frame are judged in the redis section, on the commands the instance sends: the
    // curves' "Redis commands processed per frame" counts commands processed, those the append script runs
    // inside Redis included, which are no round trips.
  }
  const redisP99 = latency100?.figures.find((f) => f.target === 'toolstream-redis')?.latencyP99Ms;
  checks.push(target('Redis store: p99 publish-to-client latency < 10 ms at 100 streams', redisP99, false, 10, 2, ' ms'));
  for (const extra of Object.values(results.extra ?? {})) checks.push(...(extra.targets ?? []));
  return checks.filter((c): c is SectionTarget => c !== undefined);
}

/**
 * The sentence for points and rows whose toolstream and limit runs were paired (lib/pairing.ts),
 * with each repetition's adjacent-pair ratios (`measure` names them); empty when none was
 * (results before round 14; the empty task's before round 21).
 */
function pairedText(items: Array<{ label: string; pairs?: number[][] }>, measure = 'toolstream / limit'): string {
  const paired = items.filter((i) => i.pairs?.length);
  if (paired.length === 0) return '';
  const each = paired.map((i) => `${i.label}: ${(i.pairs ?? []).map((p) => p.map((v) => x(v)).join(' & ')).join(', ')}`);
  // Two adjacent pairs per ABBA block; a point may run more than one block (config.pairedCurveBlocks).
  const runs = (i: { pairs?: number[][] }): number => Math.max(...(i.pairs ?? []).map((p) => p.length));
  const times = (n: number): string => (n === 2 ? 'twice' : n === 4 ? 'four times' : `${n} times`);
  const counts = [...new Set(paired.map(runs))];
  const howOften =
    counts.length === 1
      ? `${times(counts[0])}, in ${counts[0] === 2 ? 'an ABBA order' : 'ABBA blocks'}`
      : `${paired.map((i) => `${times(runs(i))} for ${i.label}`).join(', ')}, in ABBA blocks`;
  return (
    ` For ${paired.map((i) => i.label).join(' and ')}, each repetition ran toolstream and the limit ${howOften} (toolstream, limit, limit, toolstream; the next repetition the other way round), ` +
    `and a server’s figure is the geometric mean of its runs, so the ratio is that of the pairs of runs adjacent in time (${measure} in each pair, per repetition: ` +
    `${each.join('; ')}).`
  );
}

/** A paired row's uncounted runs before its repetitions: what each server paid growing to the row's size. */
function uncountedText(row: ComparisonRow): string {
  const each = (row.uncountedRuns ?? []).map((r) => {
    const others = r.gc ? `, ${r.gc.otherGcs} GC events other than scavenges` : '';
    return `${LABELS[r.target]} ${r.serverCpuPerFrameUs.toFixed(1)} µs per frame${others}`;
  });
  return (
    `Before the repetitions of ${rowLabel(row)}, toolstream and the limit each served one uncounted run of the row's size ` +
    `(a server's first run with that many tasks open at once grows its heap to them): ${each.join('; ')}.`
  );
}

function table(head: string[], body: string[][]): string {
  return [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...body.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

function rowLabel(row: ComparisonRow): string {
  const pace =
    row.scenario.intervalMs > 0
      ? `, a call every ${row.scenario.intervalMs} ms (${n(row.offeredFramesPerSec ?? NaN)} frames/s offered)`
      : ', flat out';
  return `${n(row.streams)} stream${row.streams > 1 ? 's' : ''} × ${n(row.scenario.toolCalls)} calls${pace}`;
}

function cutNote(f: TargetFigures | undefined): string {
  return f?.cutReps ? ` (${f.cutReps} of ${f.framesPerSec.reps.length} cut at the time limit)` : '';
}

function validityText(v: Validity | undefined): string[] {
  if (!v) return [];
  const head = v.ok
    ? `**Valid run**: ${n(v.streams)} streams over ${n(v.jobs)} load jobs; ${n(v.completed)} completed with exactly their scenario's frames, ${n(v.cut)} cut at a time limit (named in the tables), none failed; ${n(v.checkedFrames)} sampled frames parsed as tool-call-v1 frames, none invalid.`
    : `**INVALID RUN**: ${n(v.failedStreams)} failed streams, ${n(v.invalidFrames)} invalid frames of ${n(v.checkedFrames)} checked, ${n(v.wrongFrameCounts)} completed streams with the wrong frame count, ${n(v.uncheckedJobs)} jobs whose frames were not checked. First errors: ${v.errors.join('; ') || 'none kept'}.`;
  return [head, ''];
}

function extraSection(report: SectionReport): string[] {
  return [
    `### ${report.title}`,
    '',
    report.description,
    '',
    table(
      ['', ...report.columns],
      report.rows.map((row) => [row.label, ...row.cells.map((c, i) => (typeof c === 'string' ? c : sp(c, report.digits?.[i] ?? 0)))]),
    ),
    '',
  ];
}

export function markdownSummary(results: BenchResults): string {
  const out: string[] = [];
  const m = results.meta;
  out.push(
    `Measured ${m.date} on ${m.cpus} × ${m.cpuModel}, Node ${m.node}, ${m.quick ? 'quick mode: one repetition per figure, smaller runs' : `${m.reps} repetitions of every figure in this run`}, ` +
      `in ${n(m.durationS ?? NaN)} s. Load average ${n(m.loadAverageAtStart, 1)} at the start, ${n(m.loadAverageAtEnd ?? NaN, 1)} at the end ` +
      `(above ${m.cpus}, other work was sharing the CPUs). Figures read **median [min – max]** over the repetitions; ` +
      'a target is met only when its worst repetition meets it. Every repetition is in `results.json`. Regenerate with `npm run bench`.',
    '',
    ...validityText(results.validity),
  );
  if (results.targets?.length) {
    out.push(
      '### Targets',
      '',
      table(
        ['target', 'worst repetition', 'every repetition', 'met'],
        results.targets.map((t) => [t.target, t.worst, t.reps, t.met ? 'yes' : '**no**']),
      ),
      '',
    );
  }
  const empty = results.emptyTask;
  if (empty) {
    out.push(
      '### Per-request cost: server CPU of one empty task',
      '',
      `Request, task, its three status events, stream set-up and teardown, no tool call; ${n(empty.tasksPerRep)} tasks one after another per run${warmUpText(empty)}.` +
        pairedText([{ label: 'the empty task', pairs: empty.adjacentOursOverLimit }], 'toolstream’s CPU per task over the limit’s'),
      '',
      table(
        ['server', 'CPU per task (µs)', 'over the limit', 'over the framework floor'],
        // Results written before the floor existed have no floor row.
        EMPTY_TASK_TARGETS.filter((t) => empty.cpuPerTaskUs[t]).map((t) => [
          LABELS[t],
          sp(empty.cpuPerTaskUs[t]),
          t === 'toolstream' ? spx(empty.oursOverLimit) : t === 'floor' ? spx(empty.floorOverLimit) : '',
          t === 'toolstream' ? spx(empty.oursOverFloor) : '',
        ]),
      ),
      '',
    );
  }
  const curves = results.curves;
  if (curves) {
    const sizes = curves.ratios.map((r) => r.toolCalls);
    const redisCurve = curves.targets.includes('toolstream-redis');
    const cell = (t: Target, size: number, f: (p: NonNullable<CurvesResult['points'][number]>) => string): string => {
      const p = curves.points.find((q) => q.target === t && q.toolCalls === size);
      if (!p && t === 'toolstream-redis' && curves.redisMaxToolCalls !== undefined && size > curves.redisMaxToolCalls) {
        return `not run (the Redis curve stops at ${n(curves.redisMaxToolCalls)})`;
      }
      if (!p) return 'not run (its curve ended)';
      if (p.notFinished) {
        return `did not finish in ${n(p.notFinished.budgetMs / 1000)} s (${n(p.notFinished.framesReceived)} of ${n(p.notFinished.framesExpected)} frames, ${n(p.notFinished.framesPerSec)} frames/s)`;
      }
      return f(p);
    };
    out.push(
      '### Curves: one stream, frames/s against tool calls per task',
      '',
      'Tasks one after another on one stream (tasks smaller than the frame budget are repeated up to it). ' +
        'The references run only as far as they finish in their time budget. Ratios are taken between runs of the same repetition.' +
        pairedText(curves.ratios.map((r) => ({ label: `${n(r.toolCalls)} calls per task`, pairs: r.adjacentOursOverLimit }))),
      '',
      table(
        ['tool calls per task', ...curves.targets.map((t) => LABELS[t]), 'toolstream / limit', 'toolstream / reference', 'toolstream / reference per call', ...(redisCurve ? ['Redis / in-memory'] : [])],
        sizes.map((size) => {
          const r = curves.ratios.find((q) => q.toolCalls === size);
          return [
            n(size),
            ...curves.targets.map((t) => cell(t, size, (p) => sp(p.framesPerSec))),
            spx(r?.oursOverLimit),
            spx(r?.oursOverReference),
            spx(r?.oursOverReferencePerCall),
            ...(redisCurve ? [spx(r?.redisOverInMemory)] : []),
          ];
        }),
      ),
      '',
      '### Curves: server CPU per frame (µs, all in), against tool calls per task',
      '',
      table(
        ['tool calls per task', ...curves.targets.map((t) => LABELS[t]), 'toolstream / limit', ...(redisCurve ? ['Redis commands processed per frame (script internals included)'] : [])],
        sizes.map((size) => [
          n(size),
          ...curves.targets.map((t) => cell(t, size, (p) => sp(p.cpuPerFrameUs, 1))),
          spx(curves.ratios.find((q) => q.toolCalls === size)?.cpuOursOverLimit),
          ...(redisCurve ? [cell('toolstream-redis', size, (p) => sp(p.redisCommandsPerFrame, 2))] : []),
        ]),
      ),
      '',
    );
  }
  const rows = results.sideBySide ?? [];
  if (rows.length) {
    const fig = (r: ComparisonRow, t: Target): TargetFigures | undefined => r.figures.find((f) => f.target === t);
    const rowTargets = [...new Set(rows.flatMap((r) => r.figures.map((f) => f.target)))];
    out.push(
      '### Concurrent streams: frames/s delivered to clients',
      '',
      table(
        ['run', ...rowTargets.map((t) => LABELS[t]), 'toolstream / reference', 'toolstream / limit', 'CPU per frame, toolstream / limit'],
        rows.map((r) => [
          rowLabel(r),
          ...rowTargets.map((t) => (fig(r, t) ? `${sp(fig(r, t)?.framesPerSec)}${cutNote(fig(r, t))}` : 'not run')),
          spx(r.oursOverReference),
          spx(r.oursOverLimit),
          spx(r.cpuOursOverLimit),
        ]),
      ),
      '',
      ...(rows.some((r) => r.adjacentOursOverLimit)
        ? [pairedText(rows.map((r) => ({ label: rowLabel(r), pairs: r.adjacentOursOverLimit }))).trim(), '']
        : []),
      ...rows.filter((r) => r.uncountedRuns?.length).map((r) => `${uncountedText(r)}\n`),
      '### Publish-to-bytes-received latency, p99 (ms)',
      '',
      'Sampled once every stream of a run is open. In flat-out runs it is the queue at saturation; the paced runs show latency below it. Each paced run comes right after the server\'s warm-up run again (untimed), whatever the section ran before.',
      '',
      table(
        ['run', ...rowTargets.map((t) => LABELS[t])],
        rows.map((r) => [rowLabel(r), ...rowTargets.map((t) => (fig(r, t) ? `${sp(fig(r, t)?.latencyP99Ms, 2)}${fig(r, t)?.cutReps ? ' (cut)' : ''}` : 'not run'))]),
      ),
      '',
    );
  }
  if (results.idleMemory?.length) {
    out.push(
      '### RSS per open idle stream',
      '',
      table(
        ['server', 'streams', 'open (fewest)', 'KiB per stream', 'RSS before → open (MiB, each repetition)'],
        results.idleMemory.map((r) => [
          LABELS[r.target],
          n(r.streams),
          n(r.openedMin),
          sp(r.rssPerStreamKiB, 1),
          r.reps.map((p) => `${n(p.rssBeforeMiB)} → ${n(p.rssOpenMiB)}`).join(', '),
        ]),
      ),
      '',
    );
  }
  const mem = results.taskMemory;
  if (mem) {
    out.push(
      '### Memory per task',
      '',
      'One task on one stream, repetitions one after another on a fresh warmed-up server per row: heap and RSS after a full GC with the finished task kept for replay, over the same before it ran, and the highest seen while it ran (sampled every 100 ms, no GC). Then many small finished tasks kept for replay (a fresh server per repetition, which served nothing before), after a full GC, over the count.',
      '',
      table(
        ['server', 'one task of', 'heap kept (MiB)', 'RSS kept (MiB)', 'peak heap while running (MiB)', 'peak RSS while running (MiB)', 'Redis used_memory kept (MiB)'],
        mem.bigTask.map((r) => [
          LABELS[r.target],
          `${n(r.toolCalls)} tool calls`,
          sp(r.retainedHeapMiB, 1),
          sp(r.retainedRssMiB, 1),
          sp(r.peakHeapMiB, 1),
          sp(r.peakRssMiB, 1),
          r.redisMiB ? sp(r.redisMiB, 1) : '—',
        ]),
      ),
      '',
      table(
        ['server', 'finished tasks kept', 'tool calls each', 'heap per task (KiB)', 'RSS per task (KiB)', 'Redis used_memory per task (KiB)'],
        mem.retained.map((r) => [
          LABELS[r.target],
          n(r.tasks),
          n(r.toolCallsPerTask),
          sp(r.heapPerTaskKiB, 2),
          sp(r.rssPerTaskKiB, 2),
          r.redisPerTaskKiB ? sp(r.redisPerTaskKiB, 2) : '—',
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
      'A repetition\'s overhead is taken pair by pair (the two sides run back to back): the trimmed mean of the pairs\' executor / bare ratios. It need not equal the ratio of the two per-run columns, each side\'s own trimmed mean; that ratio is kept in results.json as `unpairedOverheadPercent`.',
      '',
      table(
        ['model script', 'tool calls', 'runs per side per repetition', 'bare LangGraph stream (ms)', 'DeepAgentExecutor (ms)', 'overhead (%)', 'every repetition'],
        exec.map((r) => [
          r.shape,
          n(r.toolCalls),
          n(r.runs),
          sp(r.bareMsPerRun, 2),
          sp(r.executorMsPerRun, 2),
          sp(r.overheadPercent, 1),
          repsOf(r.overheadPercent, 1, ' %'),
        ]),
      ),
      '',
    );
  }
  for (const extra of Object.values(results.extra ?? {})) out.push(...extraSection(extra));
  if (m.sections.length) {
    out.push(
      '### Sections of this run',
      '',
      table(
        ['section', 'seconds', 'load average at start → end'],
        m.sections.map((s) => [s.name, n(s.durationS), `${n(s.loadAverageAtStart, 1)} → ${n(s.loadAverageAtEnd, 1)}`]),
      ),
      '',
    );
  }
  return out.join('\n');
}

const point = (xv: number, s: Spread | undefined): Point => ({ x: xv, median: s?.median ?? NaN, min: s?.min ?? NaN, max: s?.max ?? NaN });

export function chart(results: BenchResults): string | undefined {
  const panels: Panel[] = [];
  const curves = results.curves;
  if (curves) {
    const series = (value: (p: CurvesResult['points'][number]) => Spread | undefined) =>
      curves.targets.map((t) => ({
        name: LABELS[t],
        color: COLORS[t],
        dashed: t === 'limit',
        points: curves.points.filter((p) => p.target === t && !p.notFinished).map((p) => point(p.toolCalls, value(p))),
      }));
    panels.push(
      { title: 'one stream: frames/s', yLabel: 'frames/s (log)', xLabel: 'tool calls per task (log)', series: series((p) => p.framesPerSec) },
      { title: 'one stream: server CPU per frame', yLabel: 'µs per frame, all in (log)', xLabel: 'tool calls per task (log)', series: series((p) => p.cpuPerFrameUs) },
    );
  }
  const throughput = (results.sideBySide ?? []).filter((r) => r.kind === 'throughput');
  if (throughput.length) {
    panels.push({
      title: `concurrent streams: frames/s (${n(throughput[0].scenario.toolCalls)} calls/task)`,
      yLabel: 'frames/s (log)',
      xLabel: 'concurrent streams (log)',
      series: TARGETS.map((t) => ({
        name: LABELS[t],
        color: COLORS[t],
        dashed: t === 'limit',
        points: throughput.map((r) => point(r.streams, r.figures.find((f) => f.target === t)?.framesPerSec)),
      })),
    });
  }
  return panels.length ? chartSvg(panels) : undefined;
}

/**
 * The short block docs/performance.md carries (between its bench:summary markers): the targets
 * on their worst repetition and the headline curve points, all from this run's results.json.
 */
export function shortSummary(results: BenchResults): string {
  const m = results.meta;
  const out: string[] = [
    `From the full run of ${m.date.slice(0, 16).replace('T', ' ')} UTC (${m.cpus} × ${m.cpuModel}, Node ${m.node}, ${m.reps} repetitions per figure, ` +
      `load average ${n(m.loadAverageAtStart, 1)} → ${n(m.loadAverageAtEnd ?? NaN, 1)}; ${results.validity?.ok ? 'every stream valid' : '**an invalid run**'}). ` +
      'Figures are median [min – max]; a target is met only on its worst repetition. All of it: [bench/RESULTS.md](../bench/RESULTS.md).',
    '',
    ...(m.skipped?.length ? [`**Sections not run (past the run's time budget): ${m.skipped.join(', ')}.**`, ''] : []),
  ];
  if (results.targets?.length) {
    out.push(table(['target', 'worst repetition', 'met'], results.targets.map((t) => [t.target, t.worst, t.met ? 'yes' : '**no**'])), '');
  }
  const curves = results.curves;
  if (curves) {
    out.push(
      table(
        ['tool calls per task (one stream)', 'toolstream frames/s', 'limit frames/s', 'toolstream / limit', 'toolstream / reference', 'toolstream / reference per call'],
        curves.ratios.map((r) => {
          const fps = (t: Target): string => {
            const p = curves.points.find((q) => q.target === t && q.toolCalls === r.toolCalls);
            return p?.notFinished ? 'did not finish' : sp(p?.framesPerSec);
          };
          const refCell = (t: Target, s: Spread): string => {
            const p = curves.points.find((q) => q.target === t && q.toolCalls === r.toolCalls);
            if (!p) return 'not run';
            return p.notFinished ? `reference did not finish in ${n(p.notFinished.budgetMs / 1000)} s` : spx(s);
          };
          return [
            n(r.toolCalls),
            fps('toolstream'),
            fps('limit'),
            spx(r.oursOverLimit),
            refCell('reference', r.oursOverReference),
            refCell('reference-per-call', r.oursOverReferencePerCall),
          ];
        }),
      ),
      '',
    );
  }
  const mem = results.taskMemory;
  if (mem) {
    // Heap and RSS of the instance, and in Redis mode what Redis holds (used_memory), per row.
    for (const r of mem.bigTask) {
      const redis = r.redisMiB ? `; Redis used_memory ${sp(r.redisMiB, 1)} MiB more` : '';
      out.push(
        `- ${LABELS[r.target]}: one task of ${n(r.toolCalls)} tool calls keeps ${sp(r.retainedHeapMiB, 1)} MiB of heap and ${sp(r.retainedRssMiB, 1)} MiB of RSS once finished (peak ${sp(r.peakHeapMiB, 1)} MiB heap, ${sp(r.peakRssMiB, 1)} MiB RSS while it runs)${redis}.`,
      );
    }
    for (const r of mem.retained) {
      const redis = r.redisPerTaskKiB ? `, and ${sp(r.redisPerTaskKiB, 1)} KiB of Redis used_memory` : '';
      out.push(`- ${n(r.tasks)} finished tasks of ${n(r.toolCallsPerTask)} tool calls kept for replay (${LABELS[r.target]}): ${sp(r.heapPerTaskKiB, 1)} KiB of heap and ${sp(r.rssPerTaskKiB, 1)} KiB of RSS each${redis}.`);
    }
    out.push('');
  }
  return out.join('\n');
}
