/**
 * `node -r ts-node/register/transpile-only bench/one-stream.ts [reps=2] [toolCalls=30000]`
 *
 * The one-stream target alone, for A/B runs of the per-frame path: one stream of one task,
 * toolstream then the limit on warm servers, `reps` times; prints each repetition's frames/s,
 * server CPU per frame and the two ratios. Run it alternately in two checkouts to compare them.
 */
import { loadavg } from 'node:os';
import { LoadProcess } from './lib/processes';
import { ServerPool } from './lib/server-pool';

async function main(): Promise<void> {
  const reps = Number(process.argv[2] ?? 2);
  const calls = Number(process.argv[3] ?? 30_000);
  const load = await LoadProcess.start();
  const pool = new ServerPool(load);
  try {
    const out: string[] = [];
    for (let rep = 0; rep < reps; rep++) {
      const row: Record<string, { fps: number; cpu: number }> = {};
      for (const target of ['toolstream', 'limit'] as const) {
        const server = await pool.server(target);
        const c0 = await server.cpuUs();
        const r = await load.run({ url: server.url, streams: 1, scenario: { toolCalls: calls, intervalMs: 0, idle: false }, timeLimitMs: 120_000 });
        const cpu = (await server.cpuUs()) - c0;
        if (r.completed !== 1) throw new Error(`${target}: ${r.errors.join('; ')}`);
        row[target] = { fps: r.framesPerSec, cpu: cpu / r.frames };
      }
      out.push(
        `rep ${rep} load ${loadavg()[0].toFixed(1)}: toolstream ${row.toolstream.fps.toFixed(0)} f/s ${row.toolstream.cpu.toFixed(1)} us/f; limit ${row.limit.fps.toFixed(0)} f/s ${row.limit.cpu.toFixed(1)} us/f; ratio ${(row.toolstream.fps / row.limit.fps).toFixed(2)} cpu ${(row.toolstream.cpu / row.limit.cpu).toFixed(2)}`,
      );
      console.log(out[out.length - 1]);
    }
  } finally {
    await pool.stopAll();
    await load.stop();
  }
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
