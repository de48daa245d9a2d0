/**
 * The tool timeline in a terminal. On a TTY a live block is redrawn in place: a spinner per
 * running tool resolving to ✓ or ✗ with its duration, under the narration line. Elsewhere
 * (pipes, files, CI logs) nothing is redrawn: one plain line per tool event, then the answer.
 */
import {
  TOOL_MARKS,
  oneLine,
  timelineView,
  type ReconnectInfo,
  type TimelineState,
  type TimelineView,
  type ToolRow,
  type ToolStatus,
} from '../client';

export interface TerminalStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface TimelinePrinter {
  /** The state changed. */
  update(state: TimelineState): void;
  /** The connection dropped and is being resumed. */
  reconnecting(info: ReconnectInfo): void;
  /** The stream is over: draw the final timeline, then the answer or why there is none. */
  finish(state: TimelineState): void;
  /** The user interrupted: draw the timeline as it stood, and no verdict on the task. */
  interrupt(state: TimelineState): void;
}

/**
 * The answer as it grows: each new piece is written as it arrives (a text a model replaced or
 * withdrew starts over on a new line), so a reader sees it being written.
 */
class AnswerWriter {
  private written: string | undefined;

  constructor(private readonly out: TerminalStream) {}

  get started(): boolean {
    return this.written !== undefined;
  }

  write(answer: string | undefined): void {
    if (answer === undefined || answer === this.written) return;
    if (this.written === undefined) this.out.write('\n');
    else if (!answer.startsWith(this.written)) this.out.write('\n');
    const from = this.written !== undefined && answer.startsWith(this.written) ? this.written.length : 0;
    this.out.write(answer.slice(from));
    this.written = answer;
  }

  /** Ends the answer's last line; true when it was written (so the outcome need not repeat it). */
  end(): boolean {
    if (this.written === undefined) return false;
    this.out.write('\n');
    return true;
  }
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

const COLOR: Readonly<Record<ToolStatus | 'dim' | 'warn', string>> = {
  running: '36',
  completed: '32',
  failed: '31',
  unfinished: '33',
  dim: '2',
  warn: '33',
};

type Paint = (color: keyof typeof COLOR, text: string) => string;

const withColor: Paint = (color, text) => `\x1b[${COLOR[color]}m${text}\x1b[0m`;
const noColor: Paint = (_color, text) => text;

/** What follows a tool's name: its args while running, its result or error once done. */
function detail(row: ToolRow): string {
  if (row.status === 'failed') return `: ${oneLine(row.errorText, 120)}`;
  if (row.status === 'unfinished') return ': did not finish';
  if (row.status === 'completed') return row.entry.result === undefined ? '' : ` → ${oneLine(row.entry.result)}`;
  return row.entry.args === undefined ? '' : ` ${oneLine(row.entry.args)}`;
}

/** A call nested under the call that delegated to another agent is indented under it. */
const indent = (row: ToolRow): string => '  '.repeat(row.depth);

function toolLine(row: ToolRow, paint: Paint, mark: string = TOOL_MARKS[row.status]): string {
  const duration = row.durationText ? ` ${paint('dim', row.durationText)}` : '';
  return `${indent(row)}${paint(row.status, mark)} ${row.name}${duration}${detail(row)}`;
}

/** The answer (unless it was streamed already), or why the task ended without one. */
function outcome(view: TimelineView, paint: Paint, answerShown = false): string {
  if (view.failed) return `${paint('failed', '✗')} the task ${view.taskState}: ${view.failureText ?? 'no reason given'}\n`;
  if (answerShown) return '';
  if (view.answer !== undefined) return `\n${view.answer}\n`;
  if (view.taskState === 'input-required' || view.taskState === 'auth-required') {
    return `${paint('warn', '?')} the agent needs ${view.taskState === 'input-required' ? 'more input' : 'authentication'}: ${view.narration ?? ''}\n`;
  }
  return `${paint('warn', '?')} the task ended ${view.taskState ?? 'without a state'} and gave no answer\n`;
}

/** The first `visible` characters of a line with colour escapes, escapes kept, then "…" and a reset. */
export function cutVisible(text: string, visible: number): string {
  let out = '';
  let shown = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\x1b' && text[i + 1] === '[') {
      // A control sequence: parameters, then one final letter.
      let end = i + 2;
      while (end < text.length && !/[A-Za-z]/.test(text[end])) end++;
      out += text.slice(i, end + 1);
      i = end;
      continue;
    }
    if (shown === visible) break;
    out += text[i];
    shown++;
  }
  return `${out}…${text.includes('\x1b[') ? '\x1b[0m' : ''}`;
}

/** Plain lines: one per narration change and per tool event. */
export class PlainTimelinePrinter implements TimelinePrinter {
  private readonly printed = new Map<string, ToolStatus>();
  private narration: string | undefined;
  private readonly answer: AnswerWriter;

  constructor(
    private readonly out: TerminalStream,
    private readonly err: TerminalStream,
    private readonly now: () => number = Date.now,
  ) {
    this.answer = new AnswerWriter(out);
  }

  update(state: TimelineState): void {
    const view = timelineView(state, this.now());
    // Once the answer is being written, tool lines would break into it: they wait for the end.
    if (this.answer.started || (view.answer !== undefined && !view.rows.some((r) => r.status === 'running'))) {
      this.answer.write(view.answer);
      return;
    }
    this.lines(view);
  }

  private lines(view: TimelineView): void {
    if (view.narration !== undefined && view.narration !== this.narration) {
      this.narration = view.narration;
      this.out.write(`· ${view.narration}\n`);
    }
    for (const row of view.rows) {
      const before = this.printed.get(row.toolCallId);
      if (before === row.status) continue;
      // A start line carries no time; a tool seen first already finished still gets one when its start was seen.
      if (before === undefined && (row.status === 'running' || row.entry.startSeen)) {
        this.out.write(`${toolLine({ ...row, status: 'running', durationText: undefined }, noColor)}\n`);
      }
      if (row.status !== 'running') this.out.write(`${toolLine(row, noColor)}\n`);
      this.printed.set(row.toolCallId, row.status);
    }
  }

  reconnecting(info: ReconnectInfo): void {
    this.err.write(`! connection lost (${info.reason}); reconnecting, attempt ${info.attempt}\n`);
  }

  finish(state: TimelineState): void {
    const view = timelineView(state, this.now());
    if (this.answer.started && !view.failed) this.answer.write(view.answer);
    const shown = this.answer.end();
    this.lines(view);
    this.out.write(outcome(view, noColor, shown));
  }

  interrupt(state: TimelineState): void {
    this.answer.end();
    this.lines(timelineView(state, this.now()));
  }
}

/**
 * A live block redrawn in place. Tools that finished before every running one are printed
 * once above the block and never redrawn, so the block stays small however long the run.
 */
export class TtyTimelinePrinter implements TimelinePrinter {
  private state: TimelineState | undefined;
  private committed = 0;
  private blockLines = 0;
  private frame = 0;
  private notice: string | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly paint: Paint;
  private readonly now: () => number;
  private readonly answer: AnswerWriter;

  constructor(
    private readonly out: TerminalStream,
    options: { color?: boolean; now?: () => number } = {},
  ) {
    this.paint = options.color === false ? noColor : withColor;
    this.now = options.now ?? Date.now;
    this.answer = new AnswerWriter(out);
  }

  update(state: TimelineState): void {
    this.state = state;
    this.notice = undefined;
    const view = timelineView(state, this.now());
    // The answer is being written and no tool runs: the block is done, the answer streams below it.
    if (this.answer.started || (view.answer !== undefined && !view.rows.some((r) => r.status === 'running'))) {
      if (!this.answer.started) this.stopBlock();
      this.answer.write(view.answer);
      return;
    }
    this.timer ??= setInterval(() => {
      this.frame++;
      this.draw(false);
    }, 80);
    this.draw(false);
  }

  reconnecting(info: ReconnectInfo): void {
    this.notice = `connection lost; reconnecting (attempt ${info.attempt})…`;
    this.draw(false);
  }

  finish(state: TimelineState): void {
    const view = timelineView(state, this.now());
    if (this.answer.started) {
      if (!view.failed) this.answer.write(view.answer);
    } else {
      this.state = state;
      this.stopBlock();
    }
    this.out.write(outcome(view, this.paint, this.answer.end()));
  }

  interrupt(state: TimelineState): void {
    if (!this.answer.started) {
      this.state = state;
      this.stopBlock();
    }
    this.answer.end();
  }

  /** The last draw: every row committed, the live block erased, the spinner stopped. */
  private stopBlock(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.draw(true);
  }

  /** One screen line: a wrapped line would break the cursor arithmetic of the redraw. A cut line keeps its colours. */
  private fit(line: (paint: Paint) => string): string {
    // A pseudo-terminal without a window size reports 0 columns.
    const width = Math.max(20, this.out.columns || 100);
    const plain = line(noColor);
    return plain.length < width ? line(this.paint) : cutVisible(line(this.paint), width - 2);
  }

  private draw(final: boolean): void {
    if (!this.state) return;
    const view = timelineView(this.state, this.now());
    const spinner = SPINNER[this.frame % SPINNER.length];
    let text = this.blockLines > 0 ? `\x1b[${this.blockLines}A\x1b[0J` : '';
    // Commit the finished rows that precede every running one.
    while (this.committed < view.rows.length && (view.rows[this.committed].status !== 'running' || final)) {
      const row = view.rows[this.committed];
      text += `${this.fit((paint) => toolLine(row, paint))}\n`;
      this.committed++;
    }
    const block: Array<(paint: Paint) => string> = [];
    if (!final) {
      for (const row of view.rows.slice(this.committed)) {
        block.push((paint) => toolLine(row, paint, row.status === 'running' ? spinner : undefined));
      }
      const status = this.notice ?? view.narration ?? 'waiting for the agent';
      block.push((paint) => `${paint(this.notice ? 'warn' : 'running', spinner)} ${paint('dim', status)}`);
    }
    for (const line of block) text += `${this.fit(line)}\n`;
    this.blockLines = block.length;
    this.out.write(text);
  }
}
