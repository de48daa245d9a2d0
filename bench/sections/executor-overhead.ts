import type { BenchConfig } from '../lib/config';

export interface ExecutorOverheadResult {
  toolCalls: number;
  runs: number;
  bareMsPerRun: number;
  executorMsPerRun: number;
  overheadPercent: number;
}

export async function measureExecutorOverhead(_config: BenchConfig, _log: (line: string) => void): Promise<ExecutorOverheadResult> {
  throw new Error('TODO: needs DeepAgentExecutor from the executor branch');
}
