import { AnswerStream, type AnswerEvent } from './answer-stream';

function stream(chunking = { flushMs: 20, flushChars: 64 }) {
  const events: AnswerEvent[] = [];
  const answer = new AnswerStream((event) => events.push(event), chunking);
  const texts = () => events.map((e) => `${e.append ? '+' : '='}${e.text}${e.last ? '|' : ''}`);
  return { answer, events, texts };
}

describe('AnswerStream', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('sends the first piece at once, then coalesces until 64 characters are waiting', () => {
    const { answer, texts } = stream();
    answer.write('m1', 'Hello');
    expect(texts()).toEqual(['=Hello']);
    const tokens = Array.from({ length: 40 }, (_, i) => ` w${i}`);
    for (const token of tokens) answer.write('m1', token);
    // 40 tokens of 3-4 characters: a piece leaves each time 64 or more are waiting.
    const sent = texts().slice(1);
    expect(sent.length).toBeGreaterThanOrEqual(2);
    expect(sent.every((t) => t.startsWith('+') && t.length - 1 >= 64)).toBe(true);
    answer.finish(`Hello${tokens.join('')}`);
    const all = texts();
    expect(all[all.length - 1].endsWith('|')).toBe(true);
    expect(all.map((t) => t.slice(1).replace(/\|$/, '')).join('')).toBe(`Hello${tokens.join('')}`);
  });

  it('sends what waits 20 ms after its first character arrived', () => {
    const { answer, texts } = stream();
    answer.write('m1', 'A');
    answer.write('m1', 'b');
    jest.advanceTimersByTime(10);
    answer.write('m1', 'c');
    expect(texts()).toEqual(['=A']);
    jest.advanceTimersByTime(10);
    expect(texts()).toEqual(['=A', '+bc']);
    jest.advanceTimersByTime(100);
    expect(texts()).toEqual(['=A', '+bc']);
    answer.finish('Abc');
    expect(texts()).toEqual(['=A', '+bc', '+|']);
  });

  it('sends every delta at once with flushMs 0 and flushChars 0', () => {
    const { answer, texts } = stream({ flushMs: 0, flushChars: 0 });
    for (const token of ['a', 'b', 'c']) answer.write('m1', token);
    answer.finish('abc');
    expect(texts()).toEqual(['=a', '+b', '+c', '+|']);
  });

  it('withdraws the text of a turn that goes on to call tools, and ignores the rest of that turn', () => {
    const { answer, texts } = stream();
    answer.write('turn1', 'Let me check ');
    answer.write('turn1', 'the weather.');
    answer.withdraw('turn1');
    answer.write('turn1', 'more narration');
    jest.advanceTimersByTime(100);
    expect(texts()).toEqual(['=Let me check ', '=']);
    answer.write('turn2', 'It is sunny.');
    answer.finish('It is sunny.');
    expect(texts()).toEqual(['=Let me check ', '=', '=It is sunny.', '+|']);
  });

  it('sends nothing for a withdrawn turn that had not begun', () => {
    const { answer, texts } = stream();
    answer.withdraw();
    answer.withdraw('other');
    expect(texts()).toEqual([]);
  });

  it('replaces the pieces with the whole text when they do not add up to the answer', () => {
    const { answer, texts } = stream();
    answer.write('m1', 'draft');
    answer.finish('the real answer');
    expect(texts()).toEqual(['=draft', '=the real answer|']);
    const fresh = stream();
    fresh.answer.finish('never streamed');
    expect(fresh.texts()).toEqual(['=never streamed|']);
  });

  it('starts afresh when another model call writes', () => {
    const { answer, texts } = stream();
    answer.write('m1', 'one');
    answer.write('m1', ' two');
    answer.write('m2', 'three');
    jest.advanceTimersByTime(100);
    answer.finish('three');
    expect(texts()).toEqual(['=one', '=three', '+|']);
  });

  it('flushes what is waiting when the run ends without an answer, and stops its timer on dispose', () => {
    const { answer, texts } = stream();
    answer.write('m1', 'partial');
    answer.write('m1', ' text');
    answer.flush();
    expect(texts()).toEqual(['=partial', '+ text']);
    answer.write('m1', ' more');
    answer.dispose();
    jest.advanceTimersByTime(100);
    expect(texts()).toEqual(['=partial', '+ text']);
  });
});
