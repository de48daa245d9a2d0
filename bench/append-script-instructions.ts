/**
 * `node -r ts-node/register/transpile-only bench/append-script-instructions.ts [calls=3000] [events=1] [maxlen=1000]`
 *
 * Instructions Redis executes for the append script (APPEND_SCRIPT), counted, not timed: a
 * redis-server of its own runs under `valgrind --tool=cachegrind --cache-sim=no`, takes `calls`
 * EVALSHA calls of `events` ~300 B tool-frame events each (one in flight, as a paced stream sends
 * them: its calls carry a tool call's two frames), the head's maxlen at `maxlen` (the store's
 * maxEventsPerTask; the default 1,000 trims the stream from the 1,000th event on, 10,000 is the
 * store's default, under which a task of fewer events is never trimmed), then shuts down. Prints the instructions in all (this includes the server's start, its
 * timers and shutdown, which move with wall time: compare the functions, or runs of 0 calls)
 * and the functions that took most, per call. Needs valgrind and cg_annotate. Run it from
 * `git archive` copies of two commits (it loads the copy's script).
 */
import { TaskEvent } from '../src/a2a/task-event';
import { CountedRedis } from './lib/cachegrind-redis';
import { APPEND_SCRIPT, appendTaskPart, encodeAppend, type AppendHead } from '../src/a2a/store/redis-task-appender';
import { ShaScript } from '../src/a2a/store/redis-scripts';

const calls = Number(process.argv[2] ?? 3_000);
const eventsPerCall = Number(process.argv[3] ?? 1);
const maxlen = Number(process.argv[4] ?? 1_000);

async function main(): Promise<void> {
  const server = await CountedRedis.start();
  const redis = server.redis;
  await redis.script('LOAD', APPEND_SCRIPT);
  await redis.hset('toolstream:task:t', { lease: 'lease-1', lastSeq: '0' });
  const script = new ShaScript(redis, APPEND_SCRIPT, 3);
  const keys = ['toolstream:task:t', 'toolstream:events:t', 'toolstream:owner:o'].map((key) => Buffer.from(key));
  const taskPart = appendTaskPart('lease-1', 'toolstream:channel:t');
  const json = JSON.stringify({ artifactUpdate: { taskId: 't', contextId: 'c', artifact: { artifactId: 'a', parts: [{ text: 'x'.repeat(200) }] } } });
  for (let call = 0; call < calls; call++) {
    const batch = Array.from({ length: eventsPerCall }, (_, i) => new TaskEvent(call * eventsPerCall + i + 1, json, true));
    const head: AppendHead = { maxlen, state: 'TASK_STATE_WORKING', statusTime: 1_000, lastSeq: batch[batch.length - 1].seq, ttlMs: 0, publish: true, member: false, snapshot: false, answer: false };
    if ((await script.call(keys, [encodeAppend(head, taskPart, batch)])) !== 1) throw new Error('the append was refused');
  }
  const counted = await server.stop();
  if (!counted) return;
  const { total } = counted;
  console.log(`${calls} calls of ${eventsPerCall} event(s), maxlen ${maxlen}: ${total.toLocaleString('en')} instructions in all (${calls > 0 ? (total / calls).toFixed(0) : '-'} per call, the server's start and timers included)`);
  for (const [name, ir] of [...counted.byFunction].slice(0, 15)) console.log(`  ${(ir / Math.max(calls, 1)).toFixed(0).padStart(7)} per call  ${name}`);
}

void main();
