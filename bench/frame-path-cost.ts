/**
 * `node [--trace-gc-nvp] -r ts-node/register/transpile-only bench/frame-path-cost.ts [calls=30000] [reps=5] [--bare]`
 *
 * The per-frame CPU of the frame path's own files alone, in-process: a TaskRecord as the
 * in-memory store makes it, one stream following it (followTask, the JSON-RPC TaskSseStream with
 * its ResponseWriter) onto a stand-in response that measures and copies each chunk as a socket
 * write does, and the bench's frames (a tool call's started and completed frame per event-loop
 * turn, as bench/lib/scenario.ts plays them, already checked as the bus binding hands them on).
 * `--bare` does what the limit does with the same frames instead (JSON.stringify of the whole
 * response, one write per frame), for the difference. No HTTP, no runtime, no bus: a one-off
 * check for changes to task-record.ts, event-log.ts, task-event.ts, task-stream.ts and
 * sse-framing.ts; run it in two checkouts, alternating. With `--trace-gc-nvp`, each repetition's
 * scavenges are summed (bytes allocated and promoted per frame).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { resolve } from 'node:path';
import type { ToolCallArtifactData } from '../src/extensions/tool-call-v1';
import { completedFrame, startedFrame } from './lib/scenario';
import { emptyTaskMessage } from './lib/empty-task-message';
import { fakeResponse } from './lib/fake-response';


/** The frame path's modules of one checkout (`--src=<checkout>`, default this one). */
interface Path {
  name: string;
  TaskRecord: typeof import('../src/a2a/task-record').TaskRecord;
  TaskSseStream: typeof import('../src/a2a/sse-framing').TaskSseStream;
  ResponseWriter: typeof import('../src/a2a/sse-framing').ResponseWriter;
  followTask: typeof import('../src/a2a/task-stream').followTask;
  checkToolCallFrame: typeof import('../src/extensions/tool-call-v1').checkToolCallFrame;
}

function load(checkout: string): Path {
  const src = resolve(checkout, 'src');
  /* eslint-disable @typescript-eslint/no-require-imports */
  return {
    name: checkout,
    ...(require(`${src}/a2a/task-record`) as Pick<Path, 'TaskRecord'>),
    ...(require(`${src}/a2a/sse-framing`) as Pick<Path, 'TaskSseStream' | 'ResponseWriter'>),
    ...(require(`${src}/a2a/task-stream`) as Pick<Path, 'followTask'>),
    ...(require(`${src}/extensions/tool-call-v1`) as Pick<Path, 'checkToolCallFrame'>),
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
}

async function toolstream(path: Path, calls: number, rep: number): Promise<void> {
  const { TaskRecord, ResponseWriter, TaskSseStream, followTask } = path;
  const frame = (f: ToolCallArtifactData): ToolCallArtifactData => path.checkToolCallFrame(f) as ToolCallArtifactData;
  const id = `task-${rep}-0123456789abcdef`;
  const contextId = `ctx-${rep}-0123456789abcdef`;
  const record = new TaskRecord({ id, contextId, owner: undefined, message: emptyTaskMessage(id, contextId), text: 'x', maxEvents: Number(process.env.MAX_EVENTS ?? 10_000), maxFinishedTools: 100, keptWhenSettled: true });
  const response = fakeResponse();
  const writer = new ResponseWriter(response);
  const events = followTask(record, { toolFrames: true, pace: writer }, { open: 0 });
  new TaskSseStream(events, '1.0', { binding: 'jsonrpc', requestId: 1 }, 15_000, () => false, writer).writeTo(response, (err) => {
    throw err;
  });
  record.narrate('working');
  for (let i = 0; i < calls; i++) {
    record.toolFrame(frame(startedFrame(i)));
    record.toolFrame(frame(completedFrame(i)));
    await nextTurn();
  }
  record.complete('done');
  await nextTurn();
}

async function bare(path: Path, calls: number, rep: number): Promise<void> {
  const frame = (f: ToolCallArtifactData): ToolCallArtifactData => path.checkToolCallFrame(f) as ToolCallArtifactData;
  const taskId = `task-${rep}-0123456789abcdef`;
  const contextId = `ctx-${rep}-0123456789abcdef`;
  const response = fakeResponse();
  let eventId = 0;
  const send = (result: object): void => {
    response.write(`id: ${++eventId}\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 1, result })}\n\n`);
  };
  const publish = (f: ToolCallArtifactData): void =>
    send({
      artifactUpdate: {
        taskId,
        contextId,
        artifact: { artifactId: `tool-call-${f.toolCallId}`, name: 'tool-call', parts: [{ data: f, metadata: { mimeType: 'application/vnd.protolabs.tool-call-v1+json' }, mediaType: 'application/json' }] },
      },
    });
  for (let i = 0; i < calls; i++) {
    publish(frame(startedFrame(i)));
    publish(frame(completedFrame(i)));
    await nextTurn();
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const [calls = 30_000, reps = 5] = args.filter((a) => !a.startsWith('--')).map(Number);
  const run = args.includes('--bare') ? bare : toolstream;
  const checkouts = args.filter((a) => a.startsWith('--src=')).map((a) => a.slice('--src='.length));
  const paths = (checkouts.length > 0 ? checkouts : [resolve(__dirname, '..')]).map(load);
  for (const path of paths) await run(path, calls, -1);
  const user = paths.map((): number[] => []);
  for (let rep = 0; rep < reps; rep++) {
    for (let p = 0; p < paths.length; p++) {
      // In turn, each checkout first in every other round.
      const path = paths[(p + rep) % paths.length];
      console.log('frame-path: start');
      const cpu = process.cpuUsage();
      await run(path, calls, rep);
      const used = process.cpuUsage(cpu);
      user[paths.indexOf(path)].push(used.user / (2 * calls));
      console.log(`frame-path: ${run.name} ${path.name} ${calls} calls: ${(used.user / (2 * calls)).toFixed(3)} µs user + ${(used.system / (2 * calls)).toFixed(3)} µs system per frame`);
    }
  }
  const stats = (xs: number[]): string => {
    const s = [...xs].sort((a, b) => a - b);
    return `${s[0].toFixed(3)} / ${s[Math.floor(s.length / 2)].toFixed(3)} / ${s[s.length - 1].toFixed(3)}`;
  };
  for (let p = 0; p < paths.length; p++) console.log(`frame-path: ${paths[p].name}: user µs per frame min / median / max ${stats(user[p])}`);
}

void main();
