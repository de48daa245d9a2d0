/**
 * Frame extraction cost per message, for runs of 10 to 10,000 tool calls.
 *
 * Replays a run the way `streamMode: "values"` delivers it: after every step a new snapshot
 * of all messages so far. The cursor reads only what is new, so the cost per message stays
 * flat as runs grow; a rescan from the start (the naive way) grows with the run.
 *
 *   npm run bench:extract
 *
 * The script runs with a 64 MB young generation (`--max-semi-space-size=64`): building a long
 * run's messages otherwise triggers scavenges that land inside the timed sections and charge
 * the growing heap to extraction.
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { cursorAt, extractToolFrames, START_CURSOR } from '../src/executor/frames/extract-tool-frames';

const RUNS = [10, 100, 1_000, 10_000];
/** A full rescan is quadratic; past this many calls it would take minutes. */
const RESCAN_UP_TO = 1_000;
const REPEATS = 5;
const MIN_MESSAGES = 20_000;

/** Message `index` (from 1) of a run of tool calls: each call is an AI turn, then its result. */
function message(index: number): BaseMessage {
  const call = Math.floor((index - 1) / 2);
  return index % 2 === 1
    ? new AIMessage({ content: '', tool_calls: [{ id: `c${call}`, name: 'calculator', args: { expression: `${call} + 1` }, type: 'tool_call' }] })
    : new ToolMessage({ tool_call_id: `c${call}`, name: 'calculator', content: `{"expression":"${call} + 1","value":${call + 1}}` });
}

/**
 * Nanoseconds of extraction per message for a run of `calls` tool calls (2 messages each).
 * As in a live run, each step adds a freshly made message and extraction reads the state;
 * the state array grows in place (LangGraph yields a fresh copy with the same content), so
 * copying and its garbage do not blur the timing. Small runs are replayed until at least
 * MIN_MESSAGES messages were read, so their figure is not a handful of timer ticks.
 */
function measure(calls: number, rescan: boolean): number {
  const messages = 2 * calls;
  const rounds = Math.max(1, Math.ceil(MIN_MESSAGES / messages));
  let elapsed = 0n;
  for (let round = 0; round < rounds; round++) {
    const state: BaseMessage[] = [new HumanMessage('go')];
    let cursor = cursorAt(1);
    let frames = 0;
    for (let i = 1; i <= messages; i++) {
      state.push(message(i));
      const started = process.hrtime.bigint();
      const out = extractToolFrames(state, rescan ? START_CURSOR : cursor);
      elapsed += process.hrtime.bigint() - started;
      cursor = out.cursor;
      frames += out.frames.length;
    }
    if (!rescan && frames !== messages) throw new Error(`expected ${messages} frames, got ${frames}`);
  }
  return Number(elapsed) / (rounds * messages);
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function main(): void {
  measure(1_000, false); // warm up the JIT
  console.log(`frame extraction, median of ${REPEATS} runs (Node ${process.version})\n`);
  console.log('tool calls | messages | cursor ns/message | full rescan ns/message');
  console.log('---------- | -------- | ----------------- | ----------------------');
  for (const calls of RUNS) {
    const cursor = median(Array.from({ length: REPEATS }, () => measure(calls, false)));
    const rescan = calls <= RESCAN_UP_TO ? median(Array.from({ length: REPEATS }, () => measure(calls, true))).toFixed(0) : '(skipped: quadratic)';
    console.log(`${String(calls).padStart(10)} | ${String(2 * calls).padStart(8)} | ${cursor.toFixed(0).padStart(17)} | ${rescan.padStart(22)}`);
  }
}

main();
