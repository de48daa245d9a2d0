import type { ToolCallArtifactData } from '../extensions/tool-call-v1';
import { events10, type Step } from '../client/fixtures/streams';
import { initialTimelineState, reduceTimeline, type TimelineState } from '../client/timeline.reducer';
import { PlainTimelinePrinter, TtyTimelinePrinter, cutVisible } from './terminal-timeline';
import { Capture } from './fixtures/capture-stream';


const at = (ms: number): string => new Date(Date.UTC(2026, 0, 15, 9, 0, 0, ms)).toISOString();
const frame = (f: ToolCallArtifactData): Step => ({ kind: 'frame', frame: f });

const nested: Step[] = [
  { kind: 'task', state: 'submitted' },
  frame({ toolCallId: 'd1', name: 'researcher', phase: 'started', args: { question: 'weather in Oslo' }, timestamp: at(0) }),
  { kind: 'status', state: 'working', text: 'researcher: checking the weather' },
  frame({ toolCallId: 'd1/w', name: 'weather', parentToolCallId: 'd1', phase: 'started', args: { city: 'Oslo' }, timestamp: at(10) }),
  frame({ toolCallId: 'd1/w', name: 'weather', parentToolCallId: 'd1', phase: 'completed', result: { tempC: 3 }, timestamp: at(20) }),
  frame({ toolCallId: 'd1', name: 'researcher', phase: 'completed', result: '3 °C in Oslo', timestamp: at(30) }),
  { kind: 'answer', text: 'It is 3 °C in Oslo.' },
  { kind: 'status', state: 'completed' },
];

function play(printer: PlainTimelinePrinter | TtyTimelinePrinter): void {
  let state: TimelineState = initialTimelineState;
  events10(nested).forEach((data, i) => {
    state = reduceTimeline(state, { data, eventId: String(i + 1), receivedAt: 0 });
    printer.update(state);
  });
  printer.finish(state);
}

describe('terminal timeline: nested calls', () => {
  it('indents a delegated agent\'s calls under the call that delegated (plain lines)', () => {
    const out = new Capture();
    play(new PlainTimelinePrinter(out, new Capture(), () => 0));
    expect(out.text.split('\n')).toEqual([
      '… researcher {"question":"weather in Oslo"}',
      '· researcher: checking the weather',
      '  … weather {"city":"Oslo"}',
      '  ✓ weather 10 ms → {"tempC":3}',
      '✓ researcher 30 ms → 3 °C in Oslo',
      '',
      'It is 3 °C in Oslo.',
      '',
    ]);
  });

  it('indents them in the live block too', () => {
    const out = new Capture(true);
    play(new TtyTimelinePrinter(out, { color: false, now: () => 0 }));
    expect(out.text).toContain('\n  ✓ weather 10 ms → {"tempC":3}\n');
    expect(out.text).toContain('✓ researcher 30 ms → 3 °C in Oslo\n');
  });
});

/** A line without its colour escapes. */
const visible = (line: string): string =>
  line
    .split('\x1b[')
    .map((piece, i) => (i === 0 ? piece : piece.slice(piece.search(/[A-Za-z]/) + 1)))
    .join('');

describe('terminal timeline: rows wider than the terminal', () => {
  it('cuts a coloured line by its visible width and keeps its colours', () => {
    const line = '\x1b[32m✓\x1b[0m weather \x1b[2m12 ms\x1b[0m → {"city":"Paris","tempC":18}';
    expect(cutVisible(line, 12)).toBe('\x1b[32m✓\x1b[0m weather \x1b[2m12…\x1b[0m');
    expect(cutVisible('plain text here', 5)).toBe('plain…');
  });

  it('draws a narrow live block in colour', () => {
    const out = new Capture(true, 24);
    const printer = new TtyTimelinePrinter(out, { color: true, now: () => Date.UTC(2026, 0, 15, 9, 0, 0, 15) });
    let state: TimelineState = initialTimelineState;
    events10(nested.slice(0, 4)).forEach((data, i) => {
      state = reduceTimeline(state, { data, eventId: String(i + 1), receivedAt: 0 });
      printer.update(state);
    });
    printer.interrupt(state);
    const lines = out.text.split('\n').filter((l) => l.includes('researcher') || l.includes('weather'));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((l) => l.includes('\x1b[3') && visible(l).length <= 23)).toBe(true);
  });
});

describe('terminal timeline: the answer as it streams on a TTY', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const streamed: Step[] = [
    { kind: 'task', state: 'submitted' },
    frame({ toolCallId: 'w', name: 'weather', phase: 'started', args: { city: 'Oslo' }, timestamp: at(0) }),
    { kind: 'status', state: 'working', text: 'checking the weather' },
    frame({ toolCallId: 'w', name: 'weather', phase: 'completed', result: { tempC: 3 }, timestamp: at(10) }),
    { kind: 'answer', text: 'It is ' },
    { kind: 'answer', text: '3 °C', append: true },
    { kind: 'answer', text: ' in Oslo.', append: true },
    { kind: 'status', state: 'completed' },
  ];

  /** Plays the steps; what each update wrote, then what finish wrote. */
  function writes(steps: Step[], printer: TtyTimelinePrinter, out: Capture): string[] {
    const each: string[] = [];
    let state: TimelineState = initialTimelineState;
    events10(steps).forEach((data, i) => {
      const before = out.text.length;
      state = reduceTimeline(state, { data, eventId: String(i + 1), receivedAt: 0 });
      printer.update(state);
      // The spinner ticks meanwhile; once the answer is being written nothing may redraw over it.
      jest.advanceTimersByTime(200);
      each.push(out.text.slice(before));
    });
    const before = out.text.length;
    printer.finish(state);
    each.push(out.text.slice(before));
    return each;
  }

  it('stops the live block, then writes each piece as it arrives, nothing else, and the answer once', () => {
    const out = new Capture(true);
    const each = writes(streamed, new TtyTimelinePrinter(out, { color: false, now: () => 0 }), out);
    // The finished tool was committed above the block; the first piece erases the block (its one
    // narration line) and starts the answer below the timeline.
    expect(each[3]).toContain('✓ weather 10 ms → {"tempC":3}\n');
    expect(each[4]).toBe('\x1b[1A\x1b[0J\nIt is ');
    expect(each.slice(5, 7)).toEqual(['3 °C', ' in Oslo.']);
    // The completed status and the end add only the answer's line end: no verdict, no second copy.
    expect(each.slice(7)).toEqual(['', '\n']);
    expect(out.text.match(/It is 3 °C in Oslo\./g)).toHaveLength(1);
  });

  it('starts over on a new line when the model replaces the text it was writing', () => {
    const out = new Capture(true);
    const replaced: Step[] = [
      { kind: 'task', state: 'submitted' },
      { kind: 'answer', text: 'Let me look' },
      { kind: 'answer', text: 'Oslo: 3 °C' },
      { kind: 'answer', text: '.', append: true },
      { kind: 'status', state: 'completed' },
    ];
    const each = writes(replaced, new TtyTimelinePrinter(out, { color: false, now: () => 0 }), out);
    expect(each.slice(1)).toEqual([expect.stringMatching(/\nLet me look$/), '\nOslo: 3 °C', '.', '', '\n']);
  });

  it('on Ctrl-C while the answer streams, ends its line and adds no verdict', () => {
    const out = new Capture(true);
    const printer = new TtyTimelinePrinter(out, { color: false, now: () => 0 });
    let state: TimelineState = initialTimelineState;
    events10(streamed.slice(0, 6)).forEach((data, i) => {
      state = reduceTimeline(state, { data, eventId: String(i + 1), receivedAt: 0 });
      printer.update(state);
    });
    printer.interrupt(state);
    jest.advanceTimersByTime(500);
    expect(out.text.endsWith('It is 3 °C\n')).toBe(true);
    expect(out.text).not.toMatch(/gave no answer|the task/);
  });
});
