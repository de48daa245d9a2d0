import fc from 'fast-check';
import { ToolTable } from './tool-table';
import type { ToolCallEntry } from './timeline.reducer';

const entry = (id: string, phase: ToolCallEntry['phase'] = 'running'): ToolCallEntry => ({
  toolCallId: id,
  name: `tool_${id}`,
  phase,
  startSeen: true,
});

describe('ToolTable', () => {
  it('keeps first-appearance order, replaces in place, appends new ids last', () => {
    const t = ToolTable.empty.set(entry('a')).set(entry('b')).set(entry('a', 'completed')).set(entry('c'));
    expect(t.ids()).toEqual(['a', 'b', 'c']);
    expect(t.get('a')?.phase).toBe('completed');
    expect(t.size).toBe(3);
    expect(t.has('z')).toBe(false);
    expect(ToolTable.empty.size).toBe(0);
  });

  it('every version stays what it was, across chunk boundaries and forks (model-based)', () => {
    // Each step picks an earlier version (a fork when not the latest) and sets an id on it.
    const step = fc.record({ from: fc.nat(), id: fc.integer({ min: 0, max: 150 }), completed: fc.boolean() });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 300 }), (steps) => {
        const versions: Array<{ table: ToolTable; model: ToolCallEntry[] }> = [{ table: ToolTable.empty, model: [] }];
        for (const s of steps) {
          const base = versions[s.from % versions.length];
          const e = entry(`c${s.id}`, s.completed ? 'completed' : 'running');
          const at = base.model.findIndex((m) => m.toolCallId === e.toolCallId);
          const model = at === -1 ? [...base.model, e] : base.model.map((m, i) => (i === at ? e : m));
          versions.push({ table: base.table.set(e), model });
        }
        for (const { table, model } of versions) {
          expect(table.values()).toEqual(model);
          expect(table.size).toBe(model.length);
          for (const m of model) expect(table.get(m.toolCallId)).toBe(m);
          expect(table.get('c999')).toBeUndefined();
        }
      }),
      { numRuns: 60 },
    );
  });
});
