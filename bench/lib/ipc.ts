/** The messages between the harness and its two child processes (server under test, load). */
import type { LoadJob, LoadResult } from '../load/load-types';

/**
 * The servers under test: toolstream; the reference design as the seed builds it on the A2A SDK
 * (a fresh artifact per frame); the same with one artifact per tool call, as an SDK user who
 * names artifacts would write it; and the limit, bare node:http writing the same frames.
 * toolstream-redis is toolstream with its task store in Redis (a redis-server the bench starts).
 * floor is the framework floor of the empty-task section: NestJS + Express around the limit's
 * handler (bench/servers/floor-server.ts).
 */
export type Target = 'toolstream' | 'toolstream-redis' | 'reference' | 'reference-per-call' | 'limit' | 'floor';
/** The servers every side-by-side section compares (the per-call reference only on the curves). */
export const TARGETS: readonly Target[] = ['toolstream', 'reference', 'limit'];
/** The empty-task section's servers, in the order each repetition runs them: those and the framework floor. */
export const EMPTY_TASK_TARGETS: readonly Target[] = ['toolstream', 'reference', 'floor', 'limit'];

export type ServerCommand =
  | { type: 'cpu' }
  | { type: 'memory'; gc: boolean }
  /** Exports the spans the OpenTelemetry SDK still holds (its BatchSpanProcessor's buffer); no-op without an SDK. */
  | { type: 'flush-spans' }
  /** The registered SDK's own CPU per span like toolstream's tool spans (lib/sdk-span-floor.ts). */
  | { type: 'span-floor'; spans: number }
  /** V8's sampling profiler, started and stopped around the load to profile (warm-up excluded). */
  | { type: 'profile-start' }
  | { type: 'profile-stop'; file: string }
  /** The GC pauses since the last such command (the first starts recording them: bench/paced-latency.ts). */
  | { type: 'gc-pauses' }
  /** V8's sampling heap profiler, counting every allocation (also those collected since), around the load to profile. */
  /** survivors: only what no scavenge collected (what the young generation copied and promoted, or is still alive). */
  | { type: 'alloc-start'; survivors?: boolean }
  | { type: 'alloc-stop'; file: string };
export type ServerReply =
  | { type: 'listening'; port: number; rpcPath: string }
  | { type: 'cpu'; userUs: number; systemUs: number }
  | { type: 'memory'; rss: number; heapUsed: number; external: number }
  | { type: 'spans-flushed' }
  | { type: 'span-floor'; spans: number; perSpanUs: number; loopPerSpanUs: number }
  | { type: 'profile-started' }
  | { type: 'profile-written'; file: string }
  /**
   * Pause durations in ms: young-generation scavenges, and every other kind of GC; and the old
   * generation's free bytes now (committed but unused: where a scavenge can promote without
   * taking new pages), and the young generation's capacity now (what fills before a scavenge:
   * V8 shrinks it while the process idles and grows it back as scavenges keep objects alive).
   */
  | {
      type: 'gc-pauses';
      scavenges: number[];
      others: number[];
      oldSpaceFreeBytes: number;
      newSpaceCapacityBytes: number;
      /** What the old and the large-object spaces hold now, garbage included until a mark-compact (bench/heap-phases.ts). */
      oldSpaceUsedBytes: number;
      largeObjectSpaceUsedBytes: number;
    }
  | { type: 'alloc-started' }
  | { type: 'alloc-written'; file: string };

export type LoadCommand = { type: 'run'; job: LoadJob } | { type: 'close' };
export type LoadReply =
  | { type: 'ready' }
  | { type: 'result'; result: LoadResult }
  /** Idle jobs: every stream is open and has received its first frame. */
  | { type: 'opened'; result: LoadResult }
  | { type: 'closed' };
