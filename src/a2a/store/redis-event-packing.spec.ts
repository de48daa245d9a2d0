import fc from 'fast-check';
import { TaskEvent, ToolFrameEvent } from '../task-event';
import { BufferEventBlock } from './redis-event-packing';

const HEAD = '{"artifactUpdate":{"taskId":"t1","contextId":"c1","artifact":{"artifactId":';

describe('BufferEventBlock', () => {
  it('gives back every event as it was added: JSON, flags, weight, and a tool frame as a ToolFrameEvent', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 40 });
    const event = fc.oneof(
      fc.record({ kind: fc.constant('plain' as const), text, isToolFrame: fc.boolean(), terminal: fc.boolean() }),
      fc.record({ kind: fc.constant('tool' as const), text, lastChunk: fc.boolean() }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000 }), fc.array(event, { minLength: 1, maxLength: 60 }), (firstSeq, specs) => {
        const block = new BufferEventBlock(firstSeq);
        const added = specs.map((spec, i) => {
          const seq = firstSeq + i;
          return spec.kind === 'plain'
            ? new TaskEvent(seq, JSON.stringify({ statusUpdate: { text: spec.text } }), spec.isToolFrame, spec.terminal)
            : new ToolFrameEvent(seq, HEAD, JSON.stringify(`tool-call-${spec.text}`), JSON.stringify({ args: spec.text }), spec.lastChunk);
        });
        for (const e of added) expect(block.add(e)).toBe(true);
        block.seal();
        expect(block.count).toBe(added.length);
        for (const e of added) {
          const back = block.get(e.seq);
          expect([back.seq, back.json, back.isToolFrame, back.terminal, block.weight(e.seq)]).toEqual([e.seq, e.json, e.isToolFrame, e.terminal, e.weight]);
          expect(back instanceof ToolFrameEvent).toBe(e instanceof ToolFrameEvent);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('keeps an event as its string when UTF-8 cannot carry its JSON exactly, and a large event in a block of its own', () => {
    const block = new BufferEventBlock(7);
    const lone = '{"statusUpdate":{"x":"\ud800 lone"}}';
    const large = `{"statusUpdate":{"x":"${'é'.repeat(100_000)}"}}`;
    expect(block.add(new TaskEvent(7, lone, false, true))).toBe(true);
    expect(block.add(new TaskEvent(8, '{"statusUpdate":{}}'))).toBe(true);
    // Past the block's room: the log opens another block, where it fits alone.
    expect(block.add(new TaskEvent(9, large))).toBe(false);
    const alone = new BufferEventBlock(9);
    expect(alone.add(new TaskEvent(9, large, true))).toBe(true);
    alone.seal();
    expect([block.get(7).json, block.get(7).terminal, block.weight(7)]).toEqual([lone, true, lone.length]);
    expect(block.get(8).json).toBe('{"statusUpdate":{}}');
    expect([alone.get(9).json === large, alone.get(9).isToolFrame, alone.weight(9)]).toEqual([true, true, large.length]);
  });

  it('is full at 2,048 events or 64 KiB, whichever comes first', () => {
    const small = new BufferEventBlock(1);
    for (let seq = 1; seq <= 2_048; seq++) expect(small.add(new TaskEvent(seq, '{}'))).toBe(true);
    expect(small.add(new TaskEvent(2_049, '{}'))).toBe(false);
    const big = new BufferEventBlock(1);
    const kib = `{"x":"${'a'.repeat(1_010)}"}`;
    let seq = 1;
    while (big.add(new TaskEvent(seq, kib))) seq += 1;
    // Room is counted at 3 bytes per character, however few the bytes written.
    expect(seq - 1).toBeGreaterThan(15);
    expect(seq - 1).toBeLessThan(64);
    for (let s = 1; s < seq; s++) expect(big.get(s).json).toBe(kib);
  });
});
