import { Narrator } from './narration';

const call = (name: string, args: unknown = {}, toolCallId = `id_${name}`) => ({ toolCallId, name, args });

describe('Narrator', () => {
  const narrator = new Narrator();

  it('phrases the demo tools', () => {
    expect(narrator.narrate([call('search_docs')])).toBe('searching the docs');
    expect(narrator.narrate([call('calculator')])).toBe('calculating');
    expect(narrator.narrate([call('weather')])).toBe('checking the weather');
  });

  it('reads unknown tools as "running <name>"', () => {
    expect(narrator.narrate([call('frobnicate')])).toBe('running frobnicate');
  });

  it('matches the longest registered prefix', () => {
    const n = new Narrator({ prefixes: { github_: 'working on GitHub', github_create_: 'filing on GitHub' } });
    expect(n.narrate([call('github_create_issue')])).toBe('filing on GitHub');
    expect(n.narrate([call('github_list_prs')])).toBe('working on GitHub');
    expect(n.narrate([call('search_web_fast')])).toBe('searching');
  });

  it('routes delegation tools to the target named in their args, or in their name', () => {
    expect(narrator.narrate([call('route_to_agent', { target: 'quinn' })])).toBe('routing to quinn');
    expect(narrator.narrate([call('delegate', { agent: 'ava' })])).toBe('routing to ava');
    expect(narrator.narrate([call('transfer_to_quinn')])).toBe('routing to quinn');
    expect(narrator.narrate([call('handoff', {})])).toBe('running handoff');
  });

  it('de-duplicates phrases within a turn and joins them with "; " in call order', () => {
    const line = narrator.narrate([
      call('weather', { city: 'Paris' }, 'a'),
      call('world_clock', { city: 'Tokyo' }, 'b'),
      call('weather', { city: 'Rome' }, 'c'),
      call('frobnicate', {}, 'd'),
    ]);
    expect(line).toBe('checking the weather; checking the clock; running frobnicate');
  });

  it('adds nothing for silent tools, by name or by prefix; a turn of only silent tools gives no line', () => {
    const n = new Narrator({ silent: ['think', 'internal_*'] });
    expect(n.narrate([call('think'), call('internal_log')])).toBeUndefined();
    expect(n.narrate([call('think'), call('calculator')])).toBe('calculating');
    expect(n.phrase(call('thinker'))).toBe('running thinker');
  });

  it('takes custom phrases, fixed or computed from the call, over the defaults', () => {
    const n = new Narrator({
      phrases: {
        weather: 'looking outside',
        pr_inspector: (c) => `inspecting PR #${(c.args as { pr: number }).pr}`,
        maybe: () => undefined,
      },
    });
    expect(n.narrate([call('weather')])).toBe('looking outside');
    expect(n.narrate([call('pr_inspector', { pr: 42 })])).toBe('inspecting PR #42');
    expect(n.narrate([call('maybe')])).toBe('running maybe');
  });

  it('gives no line for a turn without calls', () => {
    expect(narrator.narrate([])).toBeUndefined();
  });
});
