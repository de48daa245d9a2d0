/**
 * What observability costs per frame: the same toolstream server as separate processes,
 * - off: no metrics (MetricsModule's service absent, no /metrics) and no OpenTelemetry SDK, so
 *   tracing through @opentelemetry/api is a no-op;
 * - on: the OpenTelemetry Node SDK started as the demo app starts it from the standard
 *   variables (src/otel-sdk.ts): its defaults, a BatchSpanProcessor and the OTLP http/protobuf
 *   exporter, sending to a receiver on loopback that answers at once (lib/otlp-span-counter.ts, in
 *   the harness: a collector next to the service), so the exporter's encoding and sending are
 *   counted in the server's CPU and a slow network is not; and the metrics on, /metrics scraped;
 * - tracing only, and metrics only: where the cost is.
 * All play the same scripted tasks at full speed; the figure is the server's CPU (user +
 * system, every thread) per frame delivered. Each repetition interleaves the four in slices
 * (the order reversed every other slice), so a change in the machine's load falls on all four
 * alike; each slice ends, inside its CPU window, with a /metrics scrape and a flush of the
 * spans the batch processor still holds, so every span's export is counted in the slice that
 * made it. Servers are warmed up before any figure.
 */
import { loadavg } from 'node:os';
import { OtlpSpanCounter } from '../lib/otlp-span-counter';
import { ServerProcess } from '../lib/processes';
import { FRAMES_PER_TOOL_CALL } from '../lib/scenario';
import type { BenchSection, SectionContext, SectionReport, SectionRow, SectionTarget } from '../lib/section';
import { spread, worst, type Spread } from '../lib/stats';

type Mode = 'off' | 'on' | 'tracing' | 'metrics';
/** off and on are the target's pair; tracing alone and metrics alone show where the cost is. */
const MODES: readonly Mode[] = ['off', 'on', 'tracing', 'metrics'];
const MODE_LABELS: Record<Mode, string> = {
  off: 'off (no metrics, no SDK)',
  on: 'on (Node SDK, batch + OTLP http/protobuf; metrics, scraped)',
  tracing: 'tracing only (Node SDK, batch + OTLP http/protobuf)',
  metrics: 'metrics only (scraped)',
};
const traced = (mode: Mode): boolean => mode === 'on' || mode === 'tracing';
const scraped = (mode: Mode): boolean => mode === 'on' || mode === 'metrics';
/** Slices per repetition and mode, taken in turns. */
const SLICES = 4;
/** The target: at most this much more server CPU per frame with both on, on the worst repetition. */
const MAX_OVERHEAD_PCT = 10;

interface Case {
  label: string;
  toolCalls: number;
  /** Streams per repetition and mode, SLICES slices of them. */
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

interface Slice {
  frames: number;
  cpuUs: number;
  seconds: number;
  spans: number;
  scrapes: number;
}

function cases(quick: boolean): Case[] {
  return [
    { label: '4 tool calls per task', toolCalls: 4, streams: quick ? 400 : 1_200, maxOpen: 50 },
    { label: '100 tool calls per task', toolCalls: 100, streams: quick ? 80 : 160, maxOpen: 10 },
  ];
}

const SCRAPE_SAMPLES = 20;

/** Server CPU per scrape, in ms, three times over SCRAPE_SAMPLES scrapes (the CPU probe's own cost taken off). */
async function scrapeCpuMs(server: ServerProcess): Promise<Spread> {
  const url = `${new URL(server.url).origin}/metrics`;
  const perScrape: number[] = [];
  for (let rep = 0; rep < 3; rep++) {
    const a = await server.cpuUs();
    const probe = (await server.cpuUs()) - a;
    const b = await server.cpuUs();
    for (let i = 0; i < SCRAPE_SAMPLES; i++) await scrape(url);
    perScrape.push(((await server.cpuUs()) - b - probe) / SCRAPE_SAMPLES / 1000);
  }
  return spread(perScrape);
}

async function scrape(metricsUrl: string): Promise<void> {
  const response = await fetch(metricsUrl);
  const body = await response.text();
  if (response.status !== 200 || !body.includes('toolstream_frames_total')) throw new Error(`GET ${metricsUrl}: ${response.status}`);
}

/** One slice of a mode's load, its CPU window closed after the scrape and the span flush. */
async function slice(server: ServerProcess, receiver: OtlpSpanCounter, mode: Mode, c: Case, { pool }: SectionContext): Promise<Slice> {
  const streams = c.streams / SLICES;
  const spans0 = receiver.received(mode);
  const cpu0 = await server.cpuUs();
  const result = await pool.load.run({
    url: server.url,
    streams,
    maxOpen: c.maxOpen,
    scenario: { toolCalls: c.toolCalls, intervalMs: 0, idle: false },
    timeLimitMs: 120_000,
  });
  if (scraped(mode)) await scrape(`${new URL(server.url).origin}/metrics`);
  if (traced(mode)) await server.flushSpans();
  const cpuUs = (await server.cpuUs()) - cpu0;
  const expected = streams * c.toolCalls * FRAMES_PER_TOOL_CALL;
  if (result.completed !== streams || result.frames !== expected) {
    throw new Error(`observability, ${c.label}, ${mode}: ${result.completed} of ${streams} streams completed, ${result.frames} of ${expected} frames (${result.errors.join('; ')})`);
  }
  return { frames: result.frames, cpuUs, seconds: result.frames / result.framesPerSec, spans: receiver.received(mode) - spans0, scrapes: scraped(mode) ? 1 : 0 };
}

const fmt = (s: Spread, digits: number): string => s.reps.map((v) => v.toFixed(digits)).join(', ');

export const observabilitySection: BenchSection = {
  name: 'observability',
  async run(ctx: SectionContext): Promise<SectionReport> {
    const { config, pool, log } = ctx;
    const reps = Math.max(3, config.reps);
    const servers = new Map<Mode, ServerProcess>();
    const receiver = await OtlpSpanCounter.start();
    const rows: SectionRow[] = [];
    const targets: SectionTarget[] = [];
    const data: Record<string, Rep[] | Spread> = {};
    try {
      for (const mode of MODES) {
        const otel: Record<string, string> = traced(mode) ? { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.endpoint(mode), OTEL_SERVICE_NAME: `toolstream-bench-${mode}` } : {};
        servers.set(mode, await ServerProcess.start('toolstream', { BENCH_OBSERVABILITY: mode, ...otel }));
      }
      // Warm-up: a few thousand frames on each, long and short tasks, before any figure.
      for (const mode of MODES) {
        const url = servers.get(mode)!.url;
        for (const toolCalls of [500, 4]) {
          const warm = await pool.load.run({ url, streams: 40, maxOpen: 8, scenario: { toolCalls, intervalMs: 0, idle: false }, timeLimitMs: 60_000 });
          if (warm.completed !== warm.streams) throw new Error(`observability ${mode}: the warm-up failed: ${warm.errors.join('; ')}`);
        }
        if (traced(mode)) await servers.get(mode)!.flushSpans();
      }
      for (const c of cases(config.quick)) {
        const byMode: Record<Mode, Rep[]> = { off: [], on: [], tracing: [], metrics: [] };
        const overheads: Record<Mode, number[]> = { off: [], on: [], tracing: [], metrics: [] };
        for (let rep = 0; rep < reps; rep++) {
          const loadAverage = loadavg()[0];
          const sum: Record<Mode, Slice> = { off: empty(), on: empty(), tracing: empty(), metrics: empty() };
          for (let s = 0; s < SLICES; s++) {
            const order = (rep * SLICES + s) % 2 === 0 ? MODES : [...MODES].reverse();
            for (const mode of order) add(sum[mode], await slice(servers.get(mode)!, receiver, mode, c, ctx));
          }
          for (const mode of MODES) {
            const t = sum[mode];
            byMode[mode].push({ mode, loadAverage, frames: t.frames, framesPerSec: t.frames / t.seconds, cpuPerFrameUs: t.cpuUs / t.frames, spansPerTask: t.spans / c.streams, scrapes: t.scrapes });
          }
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
      // What one scrape costs the server on its own, to weigh the once-per-slice scrapes above.
      const scrapeMs = await scrapeCpuMs(servers.get('metrics')!);
      data.scrapeCpuMs = scrapeMs;
      log(`observability: one /metrics scrape costs the server ${fmt(scrapeMs, 2)} ms of CPU (${SCRAPE_SAMPLES} scrapes of an idle server, per repetition)`);
      rows.push({ label: 'one /metrics scrape of the metrics-only server, idle (its CPU in ms, not µs)', cells: [scrapeMs, '—', '—', '—', '—', '—'] });
    } finally {
      for (const server of servers.values()) await server.stop();
      await receiver.stop();
    }
    return {
      title: 'Observability: server CPU per frame with tracing and metrics on vs off',
      description:
        `The same toolstream server four times: off (no metrics, no OpenTelemetry SDK), on (the Node SDK as the demo starts it: BatchSpanProcessor, OTLP http/protobuf exporter to a receiver on loopback; metrics on, /metrics scraped once per slice), and each of the two alone. ` +
        `Tasks play scripted zero-latency tool calls; ${reps} repetitions of ${SLICES} slices per server, the servers taking turns slice by slice (the order reversed every other one); each slice's CPU includes its scrape and the export of its spans. More CPU = server CPU per frame / off's in the same repetition − 1.`,
      columns: ['server CPU per frame (µs)', 'frames/s', 'spans exported per task', '/metrics scrapes', 'more CPU per frame than off (%)', 'load average'],
      digits: [1, 0, 1, 0, 1, 1],
      rows,
      targets,
      data,
    };
  },
};

function empty(): Slice {
  return { frames: 0, cpuUs: 0, seconds: 0, spans: 0, scrapes: 0 };
}

function add(to: Slice, one: Slice): void {
  to.frames += one.frames;
  to.cpuUs += one.cpuUs;
  to.seconds += one.seconds;
  to.spans += one.spans;
  to.scrapes += one.scrapes;
}
