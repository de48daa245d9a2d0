import type { ToolCallArtifactData } from '../extensions/tool-call-v1';
import { events03, events10, type Step } from './fixtures/streams';
import { initialTimelineState, reduceTimeline, type TimelineState } from './timeline.reducer';
import { timelineView, type ToolRow } from './timeline.view';

const at = (ms: number): string => new Date(Date.UTC(2026, 0, 15, 9, 0, 0, ms)).toISOString();
const frame = (f: ToolCallArtifactData): Step => ({ kind: 'frame', frame: f });

/** A delegation: `researcher` asks a remote agent, whose weather and world_clock calls nest under it. */
const nestedRun: Step[] = [
  { kind: 'task', state: 'submitted' },
  frame({ toolCallId: 'd1', name: 'researcher', phase: 'started', args: { question: 'weather in Oslo' }, timestamp: at(0) }),
  frame({ toolCallId: 'c0', name: 'calculator', phase: 'started', timestamp: at(1) }),
  { kind: 'status', state: 'working', text: 'researcher: checking the weather' },
  frame({ toolCallId: 'd1/w', name: 'weather', parentToolCallId: 'd1', phase: 'started', timestamp: at(10) }),
  frame({ toolCallId: 'd1/w', name: 'weather', parentToolCallId: 'd1', phase: 'completed', result: { tempC: 3 }, timestamp: at(20) }),
  frame({ toolCallId: 'd1/b', name: 'helper', parentToolCallId: 'd1', phase: 'started', timestamp: at(21) }),
  frame({ toolCallId: 'd1/b/t', name: 'world_clock', parentToolCallId: 'd1/b', phase: 'started', timestamp: at(22) }),
  frame({ toolCallId: 'c0', name: 'calculator', phase: 'completed', result: 4, timestamp: at(23) }),
];

const run = (events: unknown[]): TimelineState =>
  events.reduce<TimelineState>((s, data, i) => reduceTimeline(s, { data, eventId: String(i + 1), receivedAt: 0 }), initialTimelineState);

const tree = (rows: readonly ToolRow[]): string[] => rows.map((r) => `${'  '.repeat(r.depth)}${r.name} ${r.status}`);

describe('timeline tree (parentToolCallId)', () => {
  it.each([
    ['A2A 1.0', events10],
    ['A2A 0.3', events03],
  ])('keeps the parent link of each call and draws nested calls under their parent (%s)', (_v, render) => {
    const state = run(render(nestedRun));
    expect(state.tools.get('d1/w')?.parentToolCallId).toBe('d1');
    expect(state.tools.get('d1')?.parentToolCallId).toBeUndefined();
    const view = timelineView(state, Date.UTC(2026, 0, 15, 9, 0, 1));
    expect(tree(view.rows)).toEqual([
      'researcher running',
      '  weather completed',
      '  helper running',
      '    world_clock running',
      'calculator completed',
    ]);
    // The top-level groups hold only top-level calls; nested ones are in their parent's children.
    expect(view.groups.map((g) => g.map((r) => r.name))).toEqual([['researcher', 'calculator']]);
    const researcher = view.rows[0];
    expect(researcher.children.map((r) => r.name)).toEqual(['weather', 'helper']);
    expect(researcher.childGroups.map((g) => g.map((r) => r.name))).toEqual([['weather'], ['helper']]);
    expect(view.rows[2].children.map((r) => r.toolCallId)).toEqual(['d1/b/t']);
  });

  it('a parent that ends settles its open children, down the tree', () => {
    const ended = [...nestedRun, frame({ toolCallId: 'd1', name: 'researcher', phase: 'failed', error: 'researcher: the stream broke', timestamp: at(30) })];
    const view = timelineView(run(events10(ended)), Date.UTC(2026, 0, 15, 9, 0, 1));
    expect(tree(view.rows)).toEqual([
      'researcher failed',
      '  weather completed',
      '  helper unfinished',
      '    world_clock unfinished',
      'calculator completed',
    ]);
    expect(view.rows[2].mark).toBe('?');
    expect(view.rows[2].durationText).toBeUndefined();
  });

  it('a client that ignores the field still has every call, flat and whole', () => {
    const state = run(events10(nestedRun));
    expect(state.tools.ids()).toEqual(['d1', 'c0', 'd1/w', 'd1/b', 'd1/b/t']);
    expect(state.tools.get('d1/w')).toMatchObject({ phase: 'completed', result: { tempC: 3 } });
  });

  it('keeps at the top level a call whose parent is unknown or whose parents name each other', () => {
    const odd: Step[] = [
      { kind: 'task', state: 'working' },
      frame({ toolCallId: 'x', name: 'orphan', parentToolCallId: 'never-seen', phase: 'started' }),
      frame({ toolCallId: 'a', name: 'a', parentToolCallId: 'b', phase: 'started' }),
      frame({ toolCallId: 'b', name: 'b', parentToolCallId: 'a', phase: 'started' }),
      frame({ toolCallId: 'c', name: 'c', parentToolCallId: 'c', phase: 'started' }),
      frame({ toolCallId: 'd', name: 'd', parentToolCallId: 'a', phase: 'started' }),
    ];
    const view = timelineView(run(events10(odd)), 0);
    expect(view.rows.map((r) => `${r.depth} ${r.name}`)).toEqual(['0 orphan', '0 a', '1 d', '0 b', '0 c']);
  });

  it('a replayed nested frame changes nothing', () => {
    const events = events10(nestedRun);
    const state = run(events);
    expect(reduceTimeline(state, { data: events[4], receivedAt: 0 })).toBe(state);
  });
});
