/**
 * `npm run ask -- "question" [--url http://host:port]`: asks any A2A agent that speaks
 * tool-call-v1 and draws its tool timeline live, through the client kit (agent-card
 * discovery, SendStreamingMessage, resume after drops).
 */
import { A2aClientError, TimelineStore, discoverAgent, errorMessage, followMessage } from '../client';
import { ASK_USAGE, parseAskArgs } from './ask-args';
import { PlainTimelinePrinter, TtyTimelinePrinter, type TerminalStream, type TimelinePrinter } from './terminal-timeline';

export const EXIT = { answered: 0, taskFailed: 1, usage: 2, error: 3, interrupted: 130 } as const;

export interface AskIo {
  stdout: TerminalStream;
  stderr: TerminalStream;
  env: Readonly<Record<string, string | undefined>>;
  signal?: AbortSignal;
}

export async function runAsk(argv: readonly string[], io: AskIo): Promise<number> {
  const args = parseAskArgs(argv, io.env);
  if (args.kind === 'help') {
    io.stdout.write(`${ASK_USAGE}\n`);
    return EXIT.answered;
  }
  if (args.kind === 'error') {
    io.stderr.write(`ask: ${args.message}\n\n${ASK_USAGE}\n`);
    return EXIT.usage;
  }
  const printer: TimelinePrinter = io.stdout.isTTY
    ? new TtyTimelinePrinter(io.stdout, { color: !io.env.NO_COLOR })
    : new PlainTimelinePrinter(io.stdout, io.stderr);
  const store = new TimelineStore();
  store.subscribe((state) => printer.update(state));
  try {
    // The card is under the URL given (an agent mounted at /agent serves /agent/.well-known/…).
    const cardUrl = new URL('.well-known/agent-card.json', args.url.replace(/\/*$/, '/')).href;
    const agent = await discoverAgent(args.url, { signal: io.signal, cardUrl });
    if (!agent.toolCallV1) {
      io.stderr.write('! the agent card does not declare tool-call-v1: expect narration only, no tool timeline\n');
    }
    await store.follow(
      followMessage({
        endpoint: agent.endpoint,
        text: args.question,
        signal: io.signal,
        onReconnect: (info) => printer.reconnecting(info),
      }),
    );
  } catch (err) {
    if (io.signal?.aborted) return interrupted(store, printer, io);
    io.stderr.write(`ask: ${errorMessage(err)}\n`);
    // Input the server rejects as invalid (-32602, or HTTP 400) is the user's to fix, like bad arguments.
    return isInvalidInput(err) ? EXIT.usage : EXIT.error;
  }
  if (io.signal?.aborted) return interrupted(store, printer, io);
  const final = store.getState();
  printer.finish(final);
  for (const problem of final.problems) io.stderr.write(`! ${problem}\n`);
  // Completed, or answered with a bare message (no task at all).
  const answered = final.taskState === 'completed' || (final.taskState === undefined && final.answer !== undefined);
  return answered ? EXIT.answered : EXIT.taskFailed;
}

function isInvalidInput(err: unknown): boolean {
  return err instanceof A2aClientError && (err.details.code === -32602 || err.details.status === 400);
}

/** Ctrl-C: the timeline as it stood (running tools marked interrupted), then "interrupted" and nothing else. */
function interrupted(store: TimelineStore, printer: TimelinePrinter, io: AskIo): number {
  printer.interrupt(store.settle('interrupted'));
  io.stderr.write('ask: interrupted\n');
  return EXIT.interrupted;
}

if (require.main === module) {
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort());
  runAsk(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    signal: controller.signal,
  }).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`ask: ${errorMessage(err)}\n`);
      process.exitCode = EXIT.error;
    },
  );
}
