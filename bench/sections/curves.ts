/**
 * Curves, not points: frames/s and server CPU per frame against tool calls per task, for the
 * four servers, each point one stream (tasks one after another; tasks smaller than the frame
 * budget are repeated up to it). The references clone the whole task per event, so their cost
 * per frame grows with the task; each runs only as far as it finishes in its time budget, and
 * the first point it does not finish ends its curve (reported as such, with what it delivered).
 */
import type { BenchConfig } from '../lib/config';
import type { Target } from '../lib/ipc';
import { runRecord, type RunRecord, type ServerPool } from '../lib/server-pool';
import { FRAMES_PER_TOOL_CALL, type Scenario } from '../lib/scenario';
import { ratio, spread, type Spread } from '../lib/stats';

export const CURVE_TARGETS: readonly Target[] = ['toolstream', 'reference', 'reference-per-call', 'limit'];
/** With a redis-server: toolstream with its store in Redis as well. */
export const CURVE_TARGETS_WITH_REDIS: readonly Target[] = ['toolstream', 'toolstream-redis', 'reference', 'reference-per-call', 'limit'];

export interface CurvePoint {
  target: Target;
  toolCalls: number;
  tasksPerRep: number;
  /** Set when a repetition hit the time budget: the curve of this server ends here. */
  notFinished?: { budgetMs: number; framesReceived: number; framesExpected: number; framesPerSec: number };
  framesPerSec?: Spread;
  cpuPerFrameUs?: Spread;
  latencyP99Ms?: Spread;
  /** Redis mode: Redis commands per frame (an upper bound on round trips). */
  redisCommandsPerFrame?: Spread;
}

export interface CurveRatios {
  toolCalls: number;
  /** toolstream's frames/s over each other server's, per repetition (when both finished). */
  oursOverLimit: Spread;
  oursOverReference: Spread;
  oursOverReferencePerCall: Spread;
  /** toolstream's CPU per frame over the limit's, per repetition. */
  cpuOursOverLimit: Spread;
  /** Redis mode's frames/s over in-memory toolstream's, per repetition (when measured). */
  redisOverInMemory: Spread;
}

export interface CurvesResult {
  targets: Target[];
  /** The Redis-store curve's last point (config.redisCurveMaxToolCalls). */
  redisMaxToolCalls?: number;
  points: CurvePoint[];
  ratios: CurveRatios[];
  runs: RunRecord[];
}

const isReference = (t: Target): boolean => t.startsWith('reference');

export async function measureCurves(
  config: BenchConfig,
  pool: ServerPool,
  targets: readonly Target[],
  log: (line: string) => void,
): Promise<CurvesResult> {
  const points: CurvePoint[] = [];
  const ratios: CurveRatios[] = [];
  const runs: RunRecord[] = [];
  const ended = new Set<Target>();
  for (const toolCalls of config.curveToolCalls) {
    const scenario: Scenario = { toolCalls, intervalMs: 0, idle: false };
    const perTarget = new Map<Target, RunRecord[]>();
    const pointOf = new Map<Target, CurvePoint>();
    const same: Array<Partial<Record<Target, RunRecord>>> = [];
    for (let rep = 0; rep < config.reps; rep++) {
      const thisRep: Partial<Record<Target, RunRecord>> = {};
      same.push(thisRep);
      for (const target of targets) {
        if (ended.has(target)) continue;
        if (target === 'toolstream-redis' && toolCalls > config.redisCurveMaxToolCalls) continue;
        const budget = isReference(target) ? config.referenceFrameBudget : config.curveFrameBudget;
        const tasks = Math.max(1, Math.round(budget / (toolCalls * FRAMES_PER_TOOL_CALL)));
        const timeLimitMs = isReference(target) ? config.referenceBudgetMs : config.curveTimeLimitMs;
        const point = pointOf.get(target) ?? { target, toolCalls, tasksPerRep: tasks };
        pointOf.set(target, point);
        const run = await pool.run(target, tasks, scenario, timeLimitMs, 1);
        const record = runRecord(run, rep, scenario);
        runs.push(record);
        if (run.result.completed < tasks) {
          point.notFinished = {
            budgetMs: timeLimitMs,
            framesReceived: record.frames,
            framesExpected: record.framesExpected,
            framesPerSec: record.framesPerSec,
          };
          ended.add(target);
          log(`curve ${target} ${toolCalls} calls/task: not finished in ${timeLimitMs / 1000} s (${record.frames} of ${record.framesExpected} frames); its curve ends here`);
          continue;
        }
        thisRep[target] = record;
        perTarget.set(target, [...(perTarget.get(target) ?? []), record]);
      }
    }
    for (const [target, point] of pointOf) {
      const done = point.notFinished ? [] : (perTarget.get(target) ?? []);
      if (done.length) {
        point.framesPerSec = spread(done.map((r) => r.framesPerSec));
        point.cpuPerFrameUs = spread(done.map((r) => r.serverCpuPerFrameUs));
        point.latencyP99Ms = spread(done.map((r) => r.latencyP99Ms));
        if (target === 'toolstream-redis') point.redisCommandsPerFrame = spread(done.map((r) => r.redisCommandsPerFrame ?? NaN));
      }
      points.push(point);
    }
    const over = (other: Target, value: (r: RunRecord) => number): Spread =>
      spread(
        same
          .filter((s) => s.toolstream && s[other] && !pointOf.get(other)?.notFinished)
          .map((s) => ratio(value(s.toolstream as RunRecord), value(s[other] as RunRecord))),
      );
    const row: CurveRatios = {
      toolCalls,
      oursOverLimit: over('limit', (r) => r.framesPerSec),
      oursOverReference: over('reference', (r) => r.framesPerSec),
      oursOverReferencePerCall: over('reference-per-call', (r) => r.framesPerSec),
      redisOverInMemory: spread(
        same.filter((s) => s.toolstream && s['toolstream-redis']).map((s) => ratio(s['toolstream-redis']?.framesPerSec ?? NaN, s.toolstream?.framesPerSec ?? NaN)),
      ),
      cpuOursOverLimit: spread(
        same.filter((s) => s.toolstream && s.limit).map((s) => ratio(s.toolstream?.serverCpuPerFrameUs ?? NaN, s.limit?.serverCpuPerFrameUs ?? NaN)),
      ),
    };
    ratios.push(row);
    const fps = (t: Target): string => {
      const p = pointOf.get(t);
      if (!p) return `${t} —`;
      if (p.notFinished) return `${t} not finished`;
      return `${t} ${Math.round(p.framesPerSec?.median ?? NaN)} f/s`;
    };
    log(`curve ${toolCalls} calls/task: ${targets.map(fps).join(', ')}; ours/limit ${row.oursOverLimit.reps.map((r) => r.toFixed(2)).join(', ')}`);
  }
  return { targets: [...targets], redisMaxToolCalls: config.redisCurveMaxToolCalls, points, ratios, runs };
}
