/**
 * What observability costs per frame: the same toolstream server as separate processes,
 * - off: no metrics (MetricsModule's service absent, no /metrics) and no OpenTelemetry SDK, so
 *   tracing through @opentelemetry/api is a no-op;
 * - on: the OpenTelemetry Node SDK started as the demo app starts it from the standard
 *   variables (src/otel-sdk.ts): its defaults, a BatchSpanProcessor and the OTLP http/protobuf
 *   exporter, sending to a receiver on loopback that answers at once (lib/otlp-span-counter.ts, in
 *   the harness: a collector next to the service), so the exporter's encoding and sending are
 *   counted in the server's CPU and a slow network is not; and the metrics on;
 * - tracing only, and metrics only: where the cost is (a full run only; a quick one starts
 *   off and on alone, to stay short).
 * All play the same scripted tasks at full speed; the figure is the server's CPU (user +
 * system, every thread) per frame delivered. Each repetition interleaves the servers in slices
 * (the order reversed every other slice), so a change in the machine's load falls on all
 * alike; each slice ends, inside its CPU window, with a flush of the spans the batch processor
 * still holds, so every span's export is counted in the slice that made it. Servers are warmed
 * up before any figure.
 *
 * A /metrics scrape is a cost per scrape interval, not per frame: what one scrape costs is
 * measured on its own, and the figure adds it amortised at one scrape per SCRAPE_INTERVAL_S at
 * the frame rate the server ran at (printed beside). The scrapes that check the counters after
 * each repetition are outside the CPU windows.
 */
import { loadavg } from 'node:os';
import { OtlpSpanCounter } from '../lib/otlp-span-counter';
import { ServerProcess } from '../lib/processes';
import { FRAMES_PER_TOOL_CALL } from '../lib/scenario';
import type { BenchSection, SectionContext, SectionReport, SectionRow, SectionTarget } from '../lib/section';
import { spread, worst, type Spread } from '../lib/stats';

type Mode = 'off' | 'on' | 'tracing' | 'metrics';
/**
 * off and on are the target's pair; tracing alone and metrics alone show where the cost is (a
 * full run only: a quick one starts two servers instead of four, to stay short).
 */
const modesFor = (quick: boolean): readonly Mode[] => (quick ? ['off', 'on'] : ['off', 'on', 'tracing', 'metrics']);
const MODE_LABELS: Record<Mode, string> = {
  off: 'off (no metrics, no SDK)',
  on: 'on (Node SDK, batch + OTLP http/protobuf; metrics)',
  tracing: 'tracing only (Node SDK, batch + OTLP http/protobuf)',
  metrics: 'metrics only',
};
const MODE_NAMES: Record<Mode, string> = { off: 'off', on: 'on', tracing: 'tracing only', metrics: 'metrics only' };
const traced = (mode: Mode): boolean => mode === 'on' || mode === 'tracing';
const scraped = (mode: Mode): boolean => mode === 'on' || mode === 'metrics';
/** Slices per repetition and mode, taken in turns (fewer, smaller ones in a quick run). */
const slicesFor = (quick: boolean): number => (quick ? 2 : 4);
/**
 * The scrape interval the figure amortises one /metrics scrape over: Prometheus' example
 * configuration's 15 s (its built-in default is a minute), so a frequent scraper.
 */
const SCRAPE_INTERVAL_S = 15;
/** The target: at most this much more server CPU per frame with both on, on the worst repetition. */
const MAX_OVERHEAD_PCT = 10;
/** Spans of the SDK floor measurement (lib/sdk-span-floor.ts) per repetition, in the on server. */
const floorSpansFor = (quick: boolean): number => (quick ? 5_000 : 20_000);

interface Case {
  label: string;
  toolCalls: number;
  /** Streams per repetition and mode, split into the slices. */
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
  /** The scrape's share per frame, amortised at one scrape per SCRAPE_INTERVAL_S at this frame rate (µs). */
  scrapePerFrameUs: number;
}

/** The SDK's own CPU per span like an execute_tool span, against the budget per tool call, in one repetition. */
interface Floor {
  /** The on server's SDK, per span (µs): made, ended, batched, encoded, sent (lib/sdk-span-floor.ts). */
  sdkPerSpanUs: number;
  /** Off's server CPU per tool call in the same repetition (µs). */
  offPerToolCallUs: number;
  /** MAX_OVERHEAD_PCT of it: all that one tool call's tracing and metrics may add. */
  budgetPerToolCallUs: number;
}

interface Slice {
  frames: number;
  cpuUs: number;
  seconds: number;
  spans: number;
}

function cases(quick: boolean): Case[] {
  return [
    { label: '4 tool calls per task', toolCalls: 4, streams: quick ? 80 : 1_200, maxOpen: 50 },
    { label: '100 tool calls per task', toolCalls: 100, streams: quick ? 16 : 160, maxOpen: 10 },
  ];
}

const SCRAPE_SAMPLES = 20;

/** Server CPU per scrape, in ms, three times over SCRAPE_SAMPLES scrapes (the CPU probe's own cost taken off). */
async function scrapeCpuMs(server: ServerProcess): Promise<Spread> {
  const url = metricsUrl(server);
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

async function scrape(metricsUrl: string): Promise<string> {
  const response = await fetch(metricsUrl);
  const body = await response.text();
  if (response.status !== 200 || !body.includes('toolstream_frames_total')) throw new Error(`GET ${metricsUrl}: ${response.status}`);
  return body;
}

/** toolstream_frames_total as a scrape reads it. */
function framesTotal(body: string): number {
  const line = /^toolstream_frames_total(?:\{[^}]*\})? (\S+)$/m.exec(body);
  if (!line) throw new Error('/metrics: no toolstream_frames_total sample');
  return Number(line[1]);
}

/** One slice of a mode's load, its CPU window closed after the span flush. */
async function slice(server: ServerProcess, receiver: OtlpSpanCounter, mode: Mode, c: Case, slices: number, { pool }: SectionContext): Promise<Slice> {
  const streams = c.streams / slices;
  const spans0 = receiver.received(mode);
  const cpu0 = await server.cpuUs();
  const result = await pool.load.run({
    url: server.url,
    streams,
    maxOpen: c.maxOpen,
    scenario: { toolCalls: c.toolCalls, intervalMs: 0, idle: false },
    timeLimitMs: 120_000,
  });
  if (traced(mode)) await server.flushSpans();
  const cpuUs = (await server.cpuUs()) - cpu0;
  const expected = streams * c.toolCalls * FRAMES_PER_TOOL_CALL;
  if (result.completed !== streams || result.frames !== expected) {
    throw new Error(`observability, ${c.label}, ${mode}: ${result.completed} of ${streams} streams completed, ${result.frames} of ${expected} frames (${result.errors.join('; ')})`);
  }
  return { frames: result.frames, cpuUs, seconds: result.frames / result.framesPerSec, spans: receiver.received(mode) - spans0 };
}

const fmt = (s: Spread, digits: number): string => s.reps.map((v) => v.toFixed(digits)).join(', ');

export const observabilitySection: BenchSection = {
  name: 'observability',
  async run(ctx: SectionContext): Promise<SectionReport> {
    const { config, pool, log } = ctx;
    const reps = Math.max(3, config.reps);
    const slices = slicesFor(config.quick);
    const MODES = modesFor(config.quick);
    const servers = new Map<Mode, ServerProcess>();
    const receiver = await OtlpSpanCounter.start();
    const rows: SectionRow[] = [];
    const targets: SectionTarget[] = [];
    const data: Record<string, Rep[] | Floor[] | Spread | number> = { scrapeIntervalS: SCRAPE_INTERVAL_S };
    try {
      // The servers start side by side (each boots the whole app); a failed start stops the others below.
      const started = await Promise.allSettled(
        MODES.map(async (mode) => {
          const otel: Record<string, string> = traced(mode) ? { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.endpoint(mode), OTEL_SERVICE_NAME: `toolstream-bench-${mode}` } : {};
          servers.set(mode, await ServerProcess.start('toolstream', { BENCH_OBSERVABILITY: mode, ...otel }));
        }),
      );
      const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
      const t0 = performance.now();
      const phase = (what: string): void => log(`observability: ${what} at ${((performance.now() - t0) / 1000).toFixed(1)} s after the servers were up`);
      // Warm-up: thousands of frames on each, long and short tasks, before any figure.
      for (const mode of MODES) {
        const url = servers.get(mode)!.url;
        for (const [toolCalls, streams] of [
          [500, config.quick ? 6 : 40],
          [4, config.quick ? 20 : 40],
        ]) {
          const warm = await pool.load.run({ url, streams, maxOpen: 8, scenario: { toolCalls, intervalMs: 0, idle: false }, timeLimitMs: 60_000 });
          if (warm.completed !== warm.streams) throw new Error(`observability ${mode}: the warm-up failed: ${warm.errors.join('; ')}`);
        }
        if (traced(mode)) await servers.get(mode)!.flushSpans();
      }
      phase('warmed up');
      // What one scrape costs the server on its own (its series are all there after the warm-up).
      const scrapeMs = await scrapeCpuMs(servers.get('on')!);
      data.scrapeCpuMs = scrapeMs;
      // The median of the three, amortised below.
      const scrapeUs = scrapeMs.median * 1000;
      log(`observability: one /metrics scrape costs the server ${fmt(scrapeMs, 2)} ms of CPU (${SCRAPE_SAMPLES} scrapes of an idle server, per repetition); at one scrape per ${SCRAPE_INTERVAL_S} s that is ${((scrapeUs / (SCRAPE_INTERVAL_S * 1e6)) * 100).toFixed(3)} % of one core`);
      rows.push({ label: 'one /metrics scrape of the on server, idle (its CPU in ms, not µs)', cells: [scrapeMs, '—', '—', '—', '—', '—'] });
      for (const c of cases(config.quick)) {
        const byMode: Record<Mode, Rep[]> = { off: [], on: [], tracing: [], metrics: [] };
        const overheads: Record<Mode, number[]> = { off: [], on: [], tracing: [], metrics: [] };
        const floors: Floor[] = [];
        for (let rep = 0; rep < reps; rep++) {
          const loadAverage = loadavg()[0];
          const sum: Record<Mode, Slice> = { off: empty(), on: empty(), tracing: empty(), metrics: empty() };
          const framesBefore = new Map<Mode, number>();
          for (const mode of MODES) if (scraped(mode)) framesBefore.set(mode, framesTotal(await scrape(metricsUrl(servers.get(mode)!))));
          for (let s = 0; s < slices; s++) {
            const order = (rep * slices + s) % 2 === 0 ? MODES : [...MODES].reverse();
            for (const mode of order) add(sum[mode], await slice(servers.get(mode)!, receiver, mode, c, slices, ctx));
          }
          for (const mode of MODES) {
            const t = sum[mode];
            const framesPerSec = t.frames / t.seconds;
            // Outside the CPU windows: the counters saw every frame of the repetition.
            if (scraped(mode)) {
              const counted = framesTotal(await scrape(metricsUrl(servers.get(mode)!))) - framesBefore.get(mode)!;
              if (counted !== t.frames) throw new Error(`observability ${mode}: toolstream_frames_total rose by ${counted}, the clients read ${t.frames} frames`);
            }
            const scrapePerFrameUs = scraped(mode) ? scrapeUs / (SCRAPE_INTERVAL_S * framesPerSec) : 0;
            byMode[mode].push({ mode, loadAverage, frames: t.frames, framesPerSec, cpuPerFrameUs: t.cpuUs / t.frames + scrapePerFrameUs, spansPerTask: t.spans / c.streams, scrapePerFrameUs });
          }
          for (const mode of MODES) overheads[mode].push((byMode[mode][rep].cpuPerFrameUs / byMode.off[rep].cpuPerFrameUs - 1) * 100);
          floors.push(await sdkFloor(servers.get('on')!, receiver, floorSpansFor(config.quick), byMode.off[rep].cpuPerFrameUs * FRAMES_PER_TOOL_CALL));
          const f = floors[rep];
          log(
            `observability ${c.label}, repetition ${rep + 1}: the on server's OpenTelemetry SDK spends ${f.sdkPerSpanUs.toFixed(2)} µs of CPU per span like an execute_tool span ` +
              `(${floorSpansFor(config.quick)} spans, every one received); the budget per tool call is ${f.budgetPerToolCallUs.toFixed(2)} µs (${MAX_OVERHEAD_PCT} % of off's ${f.offPerToolCallUs.toFixed(1)} µs per tool call): ` +
              `the SDK's span alone is ${(f.sdkPerSpanUs / f.budgetPerToolCallUs).toFixed(2)}x the budget`,
          );
        }
        for (const mode of MODES) {
          const mine = byMode[mode];
          rows.push({
            label: `${c.label}: ${MODE_LABELS[mode]}`,
            cells: [
              spread(mine.map((r) => r.cpuPerFrameUs)),
              spread(mine.map((r) => r.framesPerSec)),
              traced(mode) ? spread(mine.map((r) => r.spansPerTask)) : '—',
              scraped(mode) ? spread(mine.map((r) => r.scrapePerFrameUs * 1000)) : '—',
              mode === 'off' ? '—' : spread(overheads[mode]),
              spread(mine.map((r) => r.loadAverage)),
            ],
          });
        }
        rows.push(
          { label: `${c.label}: the SDK's own CPU per span like an execute_tool span, in the on server (µs, not per frame)`, cells: [spread(floors.map((f) => f.sdkPerSpanUs)), '—', '—', '—', '—', '—'] },
          {
            label: `${c.label}: the budget per tool call, ${MAX_OVERHEAD_PCT} % of off's CPU per tool call in the same repetition (µs, not per frame)`,
            cells: [spread(floors.map((f) => f.budgetPerToolCallUs)), '—', '—', '—', '—', '—'],
          },
        );
        data[`${c.label}: SDK floor`] = floors;
        const overhead = spread(overheads.on);
        const w = worst(overhead, false);
        targets.push({
          target: `observability on, ${c.label}: ≤ ${MAX_OVERHEAD_PCT} % more server CPU per frame`,
          worst: `${w.toFixed(1)} %`,
          reps: fmt(overhead, 1),
          met: Number.isFinite(w) && w <= MAX_OVERHEAD_PCT,
        });
        data[c.label] = MODES.flatMap((mode) => byMode[mode]);
        phase(`${c.label} measured`);
        const cpu = (mode: Mode) => fmt(spread(byMode[mode].map((r) => r.cpuPerFrameUs)), 1);
        const more = (mode: Mode) => {
          const o = spread(overheads[mode]);
          return `${fmt(o, 1)} % (min ${o.min.toFixed(1)}, median ${o.median.toFixed(1)}, max ${o.max.toFixed(1)})`;
        };
        const others = MODES.filter((mode) => mode !== 'off');
        log(
          `observability ${c.label}: server CPU per frame (µs, per repetition) ${MODES.map((mode) => `${MODE_NAMES[mode]} ${cpu(mode)}`).join('; ')} ` +
            `(the scrape, one per ${SCRAPE_INTERVAL_S} s at the frame rate on ran at, adds ${fmt(spread(byMode.on.map((r) => r.scrapePerFrameUs * 1000)), 2)} ns per frame). ` +
            `More CPU per frame than off: ${others.map((mode) => `${MODE_NAMES[mode]} ${more(mode)}`).join('; ')}. ` +
            `Spans per task ${fmt(spread(byMode.on.map((r) => r.spansPerTask)), 1)}; load average ${fmt(spread(MODES.flatMap((mode) => byMode[mode].map((r) => r.loadAverage))), 1)}`,
        );
      }
    } finally {
      await Promise.all([...servers.values()].map((server) => server.stop()));
      await receiver.stop();
    }
    return {
      title: 'Observability: server CPU per frame with tracing and metrics on vs off',
      description:
        `The same toolstream server ${MODES.length === 4 ? 'four times' : 'twice'}: off (no metrics, no OpenTelemetry SDK), on (the Node SDK as the demo starts it: BatchSpanProcessor, OTLP http/protobuf exporter to a receiver on loopback; metrics on)${MODES.length === 4 ? ', and each of the two alone' : ''}. ` +
        `Tasks play scripted zero-latency tool calls; ${reps} repetitions of ${slices} slices per server, the servers taking turns slice by slice (the order reversed every other one); each slice's CPU includes the export of its spans. ` +
        `A /metrics scrape is a cost per interval: the idle server's CPU per scrape (first row) is added to the figure amortised at one scrape per ${SCRAPE_INTERVAL_S} s at the frame rate the server ran at (its column, in ns per frame). More CPU = server CPU per frame / off's in the same repetition − 1.`,
      columns: ['server CPU per frame (µs)', 'frames/s', 'spans exported per task', `one /metrics scrape per ${SCRAPE_INTERVAL_S} s (ns per frame)`, 'more CPU per frame than off (%)', 'load average'],
      digits: [1, 0, 1, 2, 1, 1],
      rows,
      targets,
      data,
    };
  },
};

const metricsUrl = (server: ServerProcess): string => `${new URL(server.url).origin}/metrics`;

/**
 * The on server's SDK floor (lib/sdk-span-floor.ts), outside the slices' CPU windows, with the
 * receiver's count as proof that every span was exported (the batch processor drops spans when
 * its queue is full).
 */
async function sdkFloor(on: ServerProcess, receiver: OtlpSpanCounter, spans: number, offPerToolCallUs: number): Promise<Floor> {
  const before = receiver.received('on');
  const { perSpanUs } = await on.spanFloor(spans);
  const received = receiver.received('on') - before;
  if (received !== spans) throw new Error(`observability: the SDK floor made ${spans} spans, the receiver got ${received}`);
  return { sdkPerSpanUs: perSpanUs, offPerToolCallUs, budgetPerToolCallUs: (offPerToolCallUs * MAX_OVERHEAD_PCT) / 100 };
}

function empty(): Slice {
  return { frames: 0, cpuUs: 0, seconds: 0, spans: 0 };
}

function add(to: Slice, one: Slice): void {
  to.frames += one.frames;
  to.cpuUs += one.cpuUs;
  to.seconds += one.seconds;
  to.spans += one.spans;
}
