/**
 * What observability costs per frame: the same toolstream server as separate processes,
 * - off: no metrics (MetricsModule's service absent, no /metrics) and no OpenTelemetry SDK, so
 *   tracing through @opentelemetry/api is a no-op;
 * - on: the OpenTelemetry Node SDK registered with a BatchSpanProcessor (its exporter counts
 *   the spans in-process, see servers/bench-tracing.ts) and the metrics on, /metrics scraped
 *   every second during the run (Prometheus scrapes every 15 s or so: this is the harsher case);
 * - tracing only, and metrics only: where the cost is.
 * Both play the same scripted tasks at full speed; the figure is the server's CPU (user +
 * system) per frame delivered. The two take turns each repetition (the first of each pair
 * alternates), after both have warmed up, so neither pays alone for the JIT or the machine's load.
 */
import { loadavg } from 'node:os';
import type { LoadResult } from '../load/load-types';
import { ServerProcess } from '../lib/processes';
import { FRAMES_PER_TOOL_CALL } from '../lib/scenario';
import type { BenchSection, SectionContext, SectionReport, SectionRow, SectionTarget } from '../lib/section';
import { spread, worst, type Spread } from '../lib/stats';

type Mode = 'off' | 'on' | 'tracing' | 'metrics';
/** off and on are the target's pair; tracing alone and metrics alone show where the cost is. */
const MODES: readonly Mode[] = ['off', 'on', 'tracing', 'metrics'];
const MODE_LABELS: Record<Mode, string> = {
  off: 'off (no metrics, no SDK)',
  on: 'on (OTel SDK + BatchSpanProcessor, metrics scraped every 1 s)',
  tracing: 'tracing only (OTel SDK + BatchSpanProcessor)',
  metrics: 'metrics only (scraped every 1 s)',
};
const traced = (mode: Mode): boolean => mode === 'on' || mode === 'tracing';
const scraped = (mode: Mode): boolean => mode === 'on' || mode === 'metrics';
const SCRAPE_EVERY_MS = 1_000;
/** The target: at most this much more server CPU per frame with both on, on the worst repetition. */
const MAX_OVERHEAD_PCT = 10;

interface Case {
  label: string;
  toolCalls: number;
  streams: number;
  maxOpen: number;
}

interface Rep {
  mode: Mode;
  loadAverage: number;
  frames: number;
  framesPerSec: number;
  cpuPerFrameUs: number;
  spansPerTask: number;
  scrapes: number;
}

function cases(quick: boolean): Case[] {
  return [
    { label: '4 tool calls per task', toolCalls: 4, streams: quick ? 300 : 1_000, maxOpen: 50 },
    { label: '100 tool calls per task', toolCalls: 100, streams: quick ? 40 : 120, maxOpen: 10 },
  ];
}

/** Scrapes /metrics every second until stopped; resolves with the scrapes that answered 200. */
function scrapeWhile(metricsUrl: string): { stop: () => Promise<number> } {
  let scrapes = 0;
  let last: Promise<void> = Promise.resolve();
  const scrape = (): void => {
    last = fetch(metricsUrl).then(async (response) => {
      const body = await response.text();
      if (response.status !== 200 || !body.includes('toolstream_frames_total')) throw new Error(`GET ${metricsUrl}: ${response.status}`);
      scrapes++;
    });
  };
  scrape();
  const timer = setInterval(scrape, SCRAPE_EVERY_MS);
  return {
    stop: async () => {
      clearInterval(timer);
      await last;
      return scrapes;
    },
  };
}

async function measure(server: ServerProcess, mode: Mode, c: Case, { pool }: SectionContext): Promise<Rep> {
  const loadAverage = loadavg()[0];
  const spans0 = await server.spansExported();
  const cpu0 = await server.cpuUs();
  const scraper = scraped(mode) ? scrapeWhile(`${new URL(server.url).origin}/metrics`) : undefined;
  const result: LoadResult = await pool.load.run({
    url: server.url,
    streams: c.streams,
    maxOpen: c.maxOpen,
    scenario: { toolCalls: c.toolCalls, intervalMs: 0, idle: false },
    timeLimitMs: 120_000,
  });
  const scrapes = (await scraper?.stop()) ?? 0;
  const cpuUs = (await server.cpuUs()) - cpu0;
  const expected = c.streams * c.toolCalls * FRAMES_PER_TOOL_CALL;
  if (result.completed !== c.streams || result.frames !== expected) {
    throw new Error(`observability, ${c.label}, ${mode}: ${result.completed} of ${c.streams} streams completed, ${result.frames} of ${expected} frames (${result.errors.join('; ')})`);
  }
  // The batch processor exports every 5 s or at 512 spans: flush time is not the run's, so the
  // count waits for it (outside the measured CPU window): a task span and a span per tool call.
  const expectedSpans = c.streams * (1 + c.toolCalls);
  let spans = (await server.spansExported()) - spans0;
  for (let i = 0; traced(mode) && i < 80 && spans < expectedSpans; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    spans = (await server.spansExported()) - spans0;
  }
  return { mode, loadAverage, frames: result.frames, framesPerSec: result.framesPerSec, cpuPerFrameUs: cpuUs / result.frames, spansPerTask: spans / c.streams, scrapes };
}

const fmt = (s: Spread, digits: number): string => s.reps.map((v) => v.toFixed(digits)).join(', ');

export const observabilitySection: BenchSection = {
  name: 'observability',
  async run(ctx: SectionContext): Promise<SectionReport> {
    const { config, pool, log } = ctx;
    const reps = Math.max(3, config.reps);
    const servers = new Map<Mode, ServerProcess>();
    const rows: SectionRow[] = [];
    const targets: SectionTarget[] = [];
    const data: Record<string, Rep[]> = {};
    try {
      for (const mode of MODES) servers.set(mode, await ServerProcess.start('toolstream', { BENCH_OBSERVABILITY: mode }));
      // Warm-up: a few thousand frames on each, long and short tasks, before any figure.
      for (const mode of MODES) {
        const url = servers.get(mode)!.url;
        for (const toolCalls of [500, 4]) {
          const warm = await pool.load.run({ url, streams: 40, maxOpen: 8, scenario: { toolCalls, intervalMs: 0, idle: false }, timeLimitMs: 60_000 });
          if (warm.completed !== warm.streams) throw new Error(`observability ${mode}: the warm-up failed: ${warm.errors.join('; ')}`);
        }
      }
      for (const c of cases(config.quick)) {
        const byMode: Record<Mode, Rep[]> = { off: [], on: [], tracing: [], metrics: [] };
        const overheads: Record<Mode, number[]> = { off: [], on: [], tracing: [], metrics: [] };
        for (let rep = 0; rep < reps; rep++) {
          const order = rep % 2 === 0 ? MODES : [...MODES].reverse();
          for (const mode of order) byMode[mode].push(await measure(servers.get(mode)!, mode, c, ctx));
          for (const mode of MODES) overheads[mode].push((byMode[mode][rep].cpuPerFrameUs / byMode.off[rep].cpuPerFrameUs - 1) * 100);
        }
        for (const mode of MODES) {
          const mine = byMode[mode];
          rows.push({
            label: `${c.label}: ${MODE_LABELS[mode]}`,
            cells: [
              spread(mine.map((r) => r.cpuPerFrameUs)),
              spread(mine.map((r) => r.framesPerSec)),
              traced(mode) ? spread(mine.map((r) => r.spansPerTask)) : '—',
              scraped(mode) ? spread(mine.map((r) => r.scrapes)) : '—',
              mode === 'off' ? '—' : spread(overheads[mode]),
              spread(mine.map((r) => r.loadAverage)),
            ],
          });
        }
        const overhead = spread(overheads.on);
        const w = worst(overhead, false);
        targets.push({
          target: `observability on, ${c.label}: ≤ ${MAX_OVERHEAD_PCT} % more server CPU per frame`,
          worst: `${w.toFixed(1)} %`,
          reps: fmt(overhead, 1),
          met: Number.isFinite(w) && w <= MAX_OVERHEAD_PCT,
        });
        data[c.label] = MODES.flatMap((mode) => byMode[mode]);
        const cpu = (mode: Mode) => fmt(spread(byMode[mode].map((r) => r.cpuPerFrameUs)), 1);
        const more = (mode: Mode) => {
          const o = spread(overheads[mode]);
          return `${fmt(o, 1)} % (min ${o.min.toFixed(1)}, median ${o.median.toFixed(1)}, max ${o.max.toFixed(1)})`;
        };
        log(
          `observability ${c.label}: server CPU per frame (µs, per repetition) off ${cpu('off')}; on ${cpu('on')}; tracing only ${cpu('tracing')}; metrics only ${cpu('metrics')}. ` +
            `More CPU per frame than off: on ${more('on')}; tracing only ${more('tracing')}; metrics only ${more('metrics')}. ` +
            `Spans per task ${fmt(spread(byMode.on.map((r) => r.spansPerTask)), 1)}; load average ${fmt(spread(MODES.flatMap((mode) => byMode[mode].map((r) => r.loadAverage))), 1)}`,
        );
      }
    } finally {
      for (const server of servers.values()) await server.stop();
    }
    return {
      title: 'Observability: server CPU per frame with tracing and metrics on vs off',
      description:
        `The same toolstream server four times: off (no metrics, no OpenTelemetry SDK), on (the Node SDK with a BatchSpanProcessor whose exporter counts spans in-process; metrics on, /metrics scraped every ${SCRAPE_EVERY_MS / 1000} s), and each of the two alone. ` +
        `Tasks play scripted zero-latency tool calls; ${reps} repetitions, the servers taking turns in each (the order reversed every other one). More CPU = server CPU per frame / off's in the same repetition − 1.`,
      columns: ['server CPU per frame (µs)', 'frames/s', 'spans exported per task', '/metrics scrapes', 'more CPU per frame than off (%)', 'load average'],
      digits: [1, 0, 1, 0, 1, 1],
      rows,
      targets,
      data,
    };
  },
};
