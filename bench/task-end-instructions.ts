/**
 * `node -r ts-node/register/transpile-only bench/task-end-instructions.ts [tasks=100] [calls=100] [modes=state,end,retain] [--native]`
 *
 * Instructions Redis executes for a task's end, counted, not timed: for each mode a redis-server
 * of its own runs under `valgrind --tool=cachegrind --cache-sim=no` (`--hz 1`, so that its
 * timers weigh little), takes `tasks` tasks of `calls` append calls of two ~450 B tool frames
 * each (as paced streams send them, through the store's append script), and then:
 * - `state`: nothing more (the baseline);
 * - `end`: each task's end append: its terminal status event, a ~30 kB snapshot (as the paced
 *   row's, 100 finished tools), the answer and the owner index, as the appender sends it;
 * - `end-nosnap`: the same append without the snapshot;
 * - `end-aside`: the append without the snapshot, the snapshot written beside it with a plain SET
 *   to a key of the writer's lease and a RENAME into place (a layout the store does not use: what
 *   keeping the snapshot out of the script's arguments would cost Redis);
 * - `retain`: the end append, then the end's RETAIN_SCRIPT call per task (its keys' expiry, the
 *   run leases, filing among the finished tasks), for every task at once (as tasks that end in
 *   one event-loop turn: the store files those together, if its RedisRetention does);
 * - `retain-each`: the same, one task's end at a time (a call each).
 * Prints each mode's instructions in all and, against `state`, per task. Needs valgrind and
 * cg_annotate. Run it from `git archive` copies of two commits to compare their scripts.
 */
import { TaskEvent } from '../src/a2a/task-event';
import { CountedRedis, type RedisInstructions } from './lib/cachegrind-redis';
import { APPEND_SCRIPT, appendTaskPart, encodeAppend, type AppendHead } from '../src/a2a/store/redis-task-appender';
import { RedisRetention } from '../src/a2a/store/redis-retention';
import { ShaScript } from '../src/a2a/store/redis-scripts';

const positional = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const tasks = Number(positional[0] ?? 100);
const calls = Number(positional[1] ?? 100);
const modes = (positional[2] ?? 'state,end,retain').split(',');
const PREFIX = 'toolstream:';
/** `--native`: redis-server itself, not under valgrind: Redis's own µs (INFO commandstats) for the end's calls instead of instructions. */
const NATIVE = process.argv.includes('--native');
const TTL_MS = 3_600_000;

async function run(mode: string): Promise<RedisInstructions> {
  const server = await CountedRedis.start({ native: NATIVE, args: ['--hz', '1'] });
  const redis = server.redis;
  await redis.script('LOAD', APPEND_SCRIPT);
  const script = new ShaScript(redis, APPEND_SCRIPT, 3);
  const retention = new RedisRetention({ redis, prefix: PREFIX, maxRetainedTasks: 10_000, maxRetainedBytes: 256 * 1024 * 1024 });
  const frame = (id: string, seq: number): string =>
    JSON.stringify({ artifactUpdate: { taskId: id, contextId: `c-${id}`, artifact: { artifactId: `tool-call-${seq}`, name: 'tool-call-v1', parts: [{ data: { data: { toolCallId: `call-${seq}`, name: 'bench_tool', phase: 'completed', result: { seq, publishedAtUs: 123456789.123 } } }, mediaType: 'application/vnd.toolstream.tool-call-v1+json' }] }, append: false, lastChunk: true } });
  const snapshot = Buffer.from(JSON.stringify({ id: 't', artifacts: Array.from({ length: 100 }, (_, i) => JSON.parse(frame('t', i)).artifactUpdate.artifact) }));
  const startSnapshot = Buffer.from(JSON.stringify({ id: 't', status: { state: 'TASK_STATE_WORKING' }, history: [{ role: 'ROLE_USER', parts: [{ text: 'run the bench scenario' }] }], artifacts: [] }));
  const ids = Array.from({ length: tasks }, (_, i) => `task-${i}`);
  const keysOf = (id: string): Buffer[] => [`${PREFIX}task:${id}`, `${PREFIX}events:${id}`, `${PREFIX}owner:o`].map((key) => Buffer.from(key));
  for (const id of ids) {
    await redis.hset(`${PREFIX}task:${id}`, { id, contextId: `c-${id}`, owner: 'o', lease: 'lease-1', state: 'TASK_STATE_WORKING', lastSeq: '0' });
    await redis.zadd(`${PREFIX}leases`, Date.now() + 30_000, id);
  }
  const taskPart = (id: string): Buffer => appendTaskPart('lease-1', `${PREFIX}channel:${id}`);
  const head = (lastSeq: number, state: string, extras: Partial<AppendHead> = {}): AppendHead => ({ maxlen: 10_000, state, statusTime: 1_000, lastSeq, ttlMs: 0, publish: true, member: false, snapshot: false, answer: false, ...extras });
  // The running tasks' appends, taking turns as paced streams do.
  for (let call = 0; call < calls; call++) {
    await Promise.all(
      ids.map((id) => {
        const batch = [new TaskEvent(2 * call + 1, frame(id, call), true), new TaskEvent(2 * call + 2, frame(id, call), true)];
        // The first carries the start's snapshot (its state change), as the appender sends it: the hash holds a snapshot from then on.
        if (call === 0) return script.call(keysOf(id), [encodeAppend(head(2, 'TASK_STATE_WORKING', { snapshot: true }), taskPart(id), batch), startSnapshot]);
        return script.call(keysOf(id), [encodeAppend(head(2 * call + 2, 'TASK_STATE_WORKING'), taskPart(id), batch)]);
      }),
    );
  }
  await redis.config('RESETSTAT');
  if (mode !== 'state') {
    const last = 2 * calls + 1;
    await Promise.all(
      ids.map((id) => {
        const batch = [new TaskEvent(last, JSON.stringify({ statusUpdate: { taskId: id, contextId: `c-${id}`, status: { state: 'TASK_STATE_COMPLETED' } } }), false, true)];
        const withSnapshot = mode !== 'end-nosnap' && mode !== 'end-aside';
        const args: (string | Buffer)[] = [encodeAppend(head(last, 'TASK_STATE_COMPLETED', { member: true, snapshot: withSnapshot, answer: true }), taskPart(id), batch), Buffer.from(id)];
        if (withSnapshot) args.push(snapshot);
        args.push('the answer');
        if (mode !== 'end-aside') return script.call(keysOf(id), args);
        // The snapshot kept out of the script's arguments: written with a plain SET to a key of the
        // writer's lease, then renamed into place (what the script would do once the lease holds).
        const pending = `${PREFIX}snapshot-next:${id}:lease-1`;
        return Promise.all([redis.set(pending, snapshot, 'PX', 60_000), script.call(keysOf(id), args), redis.rename(pending, `${PREFIX}snapshot:${id}`)]);
      }),
    );
  }
  const retain = (id: string): Promise<string[]> => retention.finished(id, TTL_MS, `${PREFIX}leases`, [`${PREFIX}context:o:c-${id}`, `${PREFIX}owner:o`]);
  const cpuBefore = process.cpuUsage();
  // Every end at once, as tasks that end in one turn (the store files them together when it can).
  if (mode === 'retain') await Promise.all(ids.map(retain));
  // One end per turn: each filed by a call of its own.
  if (mode === 'retain-each') for (const id of ids) await retain(id);
  const cpu = process.cpuUsage(cpuBefore);
  if (NATIVE && mode.startsWith('retain')) console.log(`  ${mode}: this process's CPU for the RETAIN calls ${((cpu.user + cpu.system) / tasks).toFixed(1)} µs per task`);
  const stats = await redis.info('commandstats');
  if (NATIVE) console.log(`  ${mode}: after the running appends (per task): ${[...stats.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)].map(([, name, n, us]) => `${name} ${(Number(n) / tasks).toFixed(2)} calls ${(Number(us) / tasks).toFixed(1)} µs`).join(', ')}`);
  return (await server.stop()) ?? { total: NaN, byFunction: new Map() };
}

async function main(): Promise<void> {
  const totals = new Map<string, RedisInstructions>();
  for (const mode of modes) {
    const counted = await run(mode);
    const { total } = counted;
    const base = totals.get('state');
    if (!totals.has(mode)) totals.set(mode, counted);
    console.log(`${mode}: ${total.toLocaleString('en')} instructions${base !== undefined && mode !== 'state' ? `, ${((total - base.total) / tasks).toFixed(0)} per task more than state` : ''} (${tasks} tasks of ${calls} calls)`);
    if (base && mode !== 'state') {
      const more = [...counted.byFunction].map(([name, ir]): [string, number] => [name, (ir - (base.byFunction.get(name) ?? 0)) / tasks]).sort((a, b) => b[1] - a[1]);
      console.log(`  per task, by function (more than state): ${more.slice(0, 12).map(([name, ir]) => `${name.replace(/^.*:/, '')} ${ir.toFixed(0)}`).join(', ')}`);
    }
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
