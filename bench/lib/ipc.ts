/** The messages between the harness and its two child processes (server under test, load). */
import type { LoadJob, LoadResult } from '../load/load-types';

export type Target = 'toolstream' | 'reference' | 'limit';
export const TARGETS: readonly Target[] = ['toolstream', 'reference', 'limit'];

export type ServerCommand = { type: 'cpu' } | { type: 'memory' };
export type ServerReply =
  | { type: 'listening'; port: number; rpcPath: string }
  | { type: 'cpu'; userUs: number; systemUs: number }
  | { type: 'memory'; rss: number; heapUsed: number };

export type LoadCommand = { type: 'run'; job: LoadJob } | { type: 'close' };
export type LoadReply =
  | { type: 'ready' }
  | { type: 'result'; result: LoadResult }
  /** Idle jobs: every stream is open and has received its first frame. */
  | { type: 'opened'; result: LoadResult }
  | { type: 'closed' };
