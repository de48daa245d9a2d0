/**
 * `node -r ts-node/register/transpile-only bench/sdk-span-floor.ts <rounds> <spans> [NAME=VAR=value,VAR=value]...`
 *
 * What the OpenTelemetry SDK itself costs per span like toolstream's `execute_tool` spans, under
 * the SDK settings a deployment may choose through the standard OTEL_* variables. Each variant
 * is a toolstream bench server with tracing only (BENCH_OBSERVABILITY=tracing: the Node SDK as
 * src/otel-sdk.ts starts it), plus the variant's variables, exporting to a receiver in this
 * process that counts the spans; `default` (no extra variable) always comes first. After one
 * unmeasured pass each, every round asks each server in turn (the order reversed every other
 * round) for lib/sdk-span-floor.ts's measurement of `spans` spans, and checks that the receiver
 * got them all (a pass that lost some has no figure, and says so). Prints the SDK's CPU per span per variant, min / median / max over the rounds,
 * and each round's figure. Compare variants of one run, never runs: the machine's load moves
 * the figures.
 *
 * e.g. `bench/sdk-span-floor.ts 6 20000 batch2048=OTEL_BSP_MAX_EXPORT_BATCH_SIZE=2048,OTEL_BSP_MAX_QUEUE_SIZE=8192 gzip=OTEL_EXPORTER_OTLP_COMPRESSION=gzip`
 */
import { loadavg } from 'node:os';
import { OtlpSpanCounter } from './lib/otlp-span-counter';
import { ServerProcess } from './lib/processes';
import { spread } from './lib/stats';

interface Variant {
  name: string;
  env: Record<string, string>;
}

function parseVariant(spec: string): Variant {
  const at = spec.indexOf('=');
  if (at <= 0) throw new Error(`variant ${spec}: NAME=VAR=value[,VAR=value]`);
  const env: Record<string, string> = {};
  for (const pair of spec.slice(at + 1).split(',')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`variant ${spec}: ${pair} is not VAR=value`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return { name: spec.slice(0, at), env };
}

async function main(): Promise<void> {
  const [rounds, spans] = process.argv.slice(2, 4).map(Number);
  if (!(rounds > 0 && spans > 0)) throw new Error('usage: bench/sdk-span-floor.ts <rounds> <spans> [NAME=VAR=value,VAR=value]...');
  const variants: Variant[] = [{ name: 'default', env: {} }, ...process.argv.slice(4).map(parseVariant)];
  const receiver = await OtlpSpanCounter.start();
  const servers: ServerProcess[] = [];
  const perSpan = variants.map((): number[] => []);
  try {
    for (const v of variants) {
      servers.push(
        await ServerProcess.start('toolstream', { BENCH_OBSERVABILITY: 'tracing', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.endpoint(v.name), OTEL_SERVICE_NAME: 'toolstream-bench-floor', ...v.env }),
      );
    }
    // A pass whose spans did not all arrive (an export failed or was dropped) has no figure.
    const measure = async (i: number): Promise<number> => {
      const before = receiver.received(variants[i].name);
      const floor = await servers[i].spanFloor(spans);
      const got = receiver.received(variants[i].name) - before;
      if (got === spans) return floor.perSpanUs;
      console.log(`${variants[i].name}: the receiver got ${got} of ${spans} spans: no figure for this pass`);
      return NaN;
    };
    for (let i = 0; i < servers.length; i++) await measure(i);
    for (let round = 0; round < rounds; round++) {
      const order = variants.map((_, i) => (round % 2 === 0 ? i : variants.length - 1 - i));
      for (const i of order) perSpan[i].push(await measure(i));
      console.log(`round ${round + 1} of ${rounds}, load average ${loadavg()[0].toFixed(1)}: ${variants.map((v, i) => `${v.name} ${perSpan[i][round].toFixed(2)}`).join(', ')} µs per span`);
    }
  } finally {
    for (const server of servers) await server.stop();
    await receiver.stop();
  }
  variants.forEach((v, i) => {
    const s = spread(perSpan[i]);
    const vars = Object.entries(v.env).map(([k, value]) => `${k}=${value}`).join(' ') || 'the SDK defaults';
    console.log(`${v.name} (${vars}): the SDK's CPU per span ${s.min.toFixed(2)} / ${s.median.toFixed(2)} / ${s.max.toFixed(2)} µs (min / median / max of the ${perSpan[i].filter(Number.isFinite).length} rounds of ${rounds} whose spans all arrived)`);
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
