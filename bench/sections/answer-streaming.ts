/**
 * Answer streaming cost: a scripted model writes a 2,000-token answer (one token per
 * millisecond or so), run through DeepAgentExecutor with the default coalescing (a piece at 64
 * characters or 20 ms) and with one event per token. Each answer event goes where the server
 * sends it: onto a task (its `answer` artifact update, serialised once as the SSE payload). A row
 * gives the time to the first answer byte, the answer events, and the process CPU per run and per event
 * (the model's own streaming included; the per-event cost of the HTTP writes to each client is not).
 */
import { Role } from '@a2a-js/sdk';
import { DeepAgentExecutor, ScriptedChatModel, createToolAgent } from '../../src/executor';
import type { AnswerChunking } from '../../src/executor/answer/answer-stream';
import { TaskRecord, textPart } from '../../src/a2a/task-record';
import type { BenchSection, SectionContext, SectionReport } from '../lib/section';
import { spread } from '../lib/stats';

const TOKENS = 2_000;
/** Pause between tokens: a fast hosted model writes a token every few milliseconds. */
const TOKEN_DELAY_MS = 1;

const MODES: ReadonlyArray<{ label: string; chunking: AnswerChunking }> = [
  { label: 'coalesced (64 characters or 20 ms)', chunking: { flushMs: 20, flushChars: 64 } },
  { label: 'one event per token', chunking: { flushMs: 0, flushChars: 0 } },
];

interface RunFigures {
  firstByteMs: number;
  events: number;
  cpuMsPerRun: number;
  cpuUsPerEvent: number;
}

function newTask(id: string): TaskRecord {
  return new TaskRecord({
    id,
    contextId: `ctx-${id}`,
    owner: undefined,
    message: { messageId: `m-${id}`, contextId: `ctx-${id}`, taskId: id, role: Role.ROLE_USER, parts: [textPart('write')], metadata: undefined, extensions: [], referenceTaskIds: [] },
    text: 'write',
    maxEvents: 10_000,
    maxFinishedTools: 100,
  });
}

function runOnce(executor: DeepAgentExecutor, id: string, answer: string): Promise<RunFigures> {
  const task = newTask(id);
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    let firstByteMs = NaN;
    let events = 0;
    executor.run('write', { correlationId: id }).subscribe({
      next: (event) => {
        if (event.type === 'answer') {
          if (events === 0) firstByteMs = performance.now() - t0;
          events++;
          task.answer(event.text, event.append, event.last);
        } else if (event.type === 'reply') {
          task.complete(event.text);
        } else if (event.type === 'error') {
          reject(new Error(`the run failed: ${event.error}`));
        }
      },
      error: reject,
      complete: () => {
        const { user, system } = process.cpuUsage(cpu0);
        const streamed = task.snapshot().artifacts.find((a) => a.name === 'answer');
        const text = streamed?.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
        if (text !== answer) reject(new Error('the streamed answer is not the model\'s text'));
        else resolve({ firstByteMs, events, cpuMsPerRun: (user + system) / 1000, cpuUsPerEvent: (user + system) / events });
      },
    });
  });
}

export const answerStreamingSection: BenchSection = {
  name: 'answer',
  async run({ config, log }: SectionContext): Promise<SectionReport> {
    const tokens = Array.from({ length: TOKENS }, (_, i) => `word${i % 97} `);
    const answer = tokens.join('');
    const rows = [];
    const raw: Record<string, RunFigures[]> = {};
    const executors = MODES.map((mode) => {
      const model = new ScriptedChatModel({ turns: [{ text: answer, chunks: tokens, chunkDelayMs: TOKEN_DELAY_MS }] });
      const agent = createToolAgent(model, []);
      return new DeepAgentExecutor(agent, { agent, answerChunking: mode.chunking });
    });
    // Both modes warm up, then take turns, so neither pays for the JIT or the machine's mood alone.
    for (const executor of executors) await runOnce(executor, 'warm-up', answer);
    for (let i = 0; i < config.reps; i++) {
      for (const [m, mode] of MODES.entries()) (raw[mode.label] ??= []).push(await runOnce(executors[m], `rep-${i}`, answer));
    }
    for (const mode of MODES) {
      const reps = raw[mode.label];
      const figures = {
        firstByte: spread(reps.map((r) => r.firstByteMs)),
        events: spread(reps.map((r) => r.events)),
        cpuRun: spread(reps.map((r) => r.cpuMsPerRun)),
        cpu: spread(reps.map((r) => r.cpuUsPerEvent)),
      };
      log(
        `answer ${mode.label}: first byte ${figures.firstByte.median.toFixed(1)} ms, ${figures.events.median} events, ` +
          `${figures.cpuRun.median.toFixed(0)} ms CPU per run, ${figures.cpu.median.toFixed(0)} µs CPU per event`,
      );
      rows.push({ label: mode.label, cells: [figures.firstByte, figures.events, figures.cpuRun, figures.cpu] });
    }
    return {
      title: `Answer streaming: a ${TOKENS}-token answer, coalesced vs one event per token`,
      description: `A scripted model writes ${TOKENS} tokens about ${TOKEN_DELAY_MS} ms apart through DeepAgentExecutor; each answer event becomes the task's answer artifact update, serialised as its SSE payload. CPU is the whole process's, divided by the answer events.`,
      columns: ['time to first answer byte (ms)', 'answer events', 'CPU per run (ms)', 'CPU per answer event (µs)'],
      digits: [1, 0, 0, 0],
      rows,
      data: raw,
    };
  },
};
