import { FRAME_ID_START, frameNamesId, idEndInFrame, idFromFrame } from './task-event';

describe('frameNamesId', () => {
  const frame = (id: string): string => JSON.stringify({ toolCallId: id, name: 'x', phase: 'completed', result: 1 });

  it('is true for the id a frame names first, when JSON does not escape it, and the id reads back', () => {
    for (const id of ['a', 'call_1', 'tool-call-9f3e', '', 'é']) {
      expect(frameNamesId(frame(id), id)).toBe(true);
      expect(idFromFrame(frame(id))).toBe(id);
      expect(idEndInFrame(frame(id)) - FRAME_ID_START).toBe(id.length);
    }
  });

  it('is false for an id that only begins the frame\'s, or that the frame\'s begins', () => {
    expect(frameNamesId(frame('call_12'), 'call_1')).toBe(false);
    expect(frameNamesId(frame('call_1'), 'call_12')).toBe(false);
  });

  it('is false for an id that runs past the frame\'s own into the JSON after it', () => {
    // The frame's id, its closing quote and the next key's opening read as one id followed by a quote.
    expect(frameNamesId(frame('a'), 'a","name')).toBe(false);
    expect(frameNamesId(frame('a'), 'a\\')).toBe(false);
  });

  it('is false for ids JSON escapes (their text in the frame is not the id)', () => {
    for (const id of ['q"x', 'd\\e', 'line\nbreak']) expect(frameNamesId(frame(id), id)).toBe(false);
  });
});
