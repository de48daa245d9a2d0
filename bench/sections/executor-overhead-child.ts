/**
 * Child-process entry of the executor-overhead section: a fresh process, so the measurement
 * does not run on the harness's heap (or after its other sections' garbage). Gets its config
 * as JSON in argv, sends the rows back over IPC.
 */
import type { BenchConfig } from '../lib/config';
import { measureExecutorOverhead } from './executor-overhead';

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '') as BenchConfig;
  const rows = await measureExecutorOverhead(config, (line) => console.log(`         ${line}`));
  process.send?.({ type: 'executor-overhead', rows }, () => process.exit(0));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
