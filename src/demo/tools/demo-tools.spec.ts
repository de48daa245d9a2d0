import type { StructuredToolInterface } from '@langchain/core/tools';
import { createDemoTools } from './demo-tools';
import { DocsCorpus } from './docs-corpus';
import { SLOW_TASK_MAX_MS } from './slow-task.tool';

const tools = createDemoTools({ now: () => new Date('2026-06-02T12:00:00.000Z') });
const byName = (name: string): StructuredToolInterface => {
  const found = tools.find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
};
const call = (name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<unknown> => byName(name).invoke(args, { signal });

describe('demo tools', () => {
  it('have the fixed names narration relies on', () => {
    expect(tools.map((t) => t.name)).toEqual(['weather', 'world_clock', 'calculator', 'search_docs', 'read_doc', 'slow_task']);
  });

  describe('weather', () => {
    it('answers from bundled data, whatever the case or accents', async () => {
      expect(await call('weather', { city: 'paris' })).toEqual({
        city: 'Paris',
        country: 'France',
        condition: 'partly cloudy',
        temperatureC: 18,
        humidityPercent: 62,
        windKph: 14,
      });
      expect(await call('weather', { city: 'Sao Paulo' })).toMatchObject({ city: 'São Paulo' });
    });

    it('fails with a real error for an unknown city', async () => {
      await expect(call('weather', { city: 'Atlantis' })).rejects.toThrow('no weather data for "Atlantis"');
    });
  });

  describe('world_clock', () => {
    it('gives the local time of a city and of an IANA zone', async () => {
      expect(await call('world_clock', { place: 'Tokyo' })).toEqual({
        place: 'Tokyo',
        timeZone: 'Asia/Tokyo',
        time: '21:00',
        date: 'Tuesday 2 June 2026',
        utcOffset: 'GMT+9',
      });
      expect(await call('world_clock', { place: 'America/New_York' })).toMatchObject({ time: '08:00', utcOffset: 'GMT-4' });
      expect(await call('world_clock', { place: 'UTC' })).toMatchObject({ time: '12:00', timeZone: 'UTC' });
    });

    it('fails for a place it cannot place', async () => {
      await expect(call('world_clock', { place: 'Narnia' })).rejects.toThrow('unknown city or time zone "Narnia"');
    });
  });

  describe('calculator', () => {
    it('evaluates, and fails on division by zero and on syntax errors', async () => {
      expect(await call('calculator', { expression: '(12 + 3) * 7 / sqrt(9)' })).toEqual({ expression: '(12 + 3) * 7 / sqrt(9)', value: 35 });
      await expect(call('calculator', { expression: '1/0' })).rejects.toThrow('division by zero');
      await expect(call('calculator', { expression: '2 +' })).rejects.toThrow('unexpected end of expression');
    });
  });

  describe('search_docs', () => {
    it('ranks the corpus documents by relevance', async () => {
      const out = (await call('search_docs', { query: 'replay after reconnect' })) as { results: Array<{ id: string; score: number; snippet: string }> };
      expect(out.results[0].id).toBe('replay');
      expect(out.results[0].snippet).toMatch(/replay|reconnect/i);
      const scores = out.results.map((r) => r.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      expect(out.results.length).toBeLessThanOrEqual(3);
    });

    it('finds nothing for words the corpus lacks, and rejects an empty query', async () => {
      expect(await call('search_docs', { query: 'xylophone' })).toEqual({ query: 'xylophone', results: [] });
      await expect(call('search_docs', { query: '  ' })).rejects.toThrow('the search query is empty');
    });

    it('ranks by BM25 over any corpus', () => {
      const corpus = new DocsCorpus([
        { id: 'a', title: 'Cats', content: 'cats cats cats and dogs' },
        { id: 'b', title: 'Dogs', content: 'dogs only here' },
        { id: 'c', title: 'Birds', content: 'nothing relevant' },
      ]);
      expect(corpus.search('dogs', 5).map((h) => h.id)).toEqual(['b', 'a']);
      expect(corpus.search('cat', 5).map((h) => h.id)).toEqual(['a']);
    });
  });

  describe('read_doc', () => {
    it('reads a document by id', async () => {
      expect(await call('read_doc', { id: 'Replay' })).toMatchObject({ id: 'replay', title: 'Replay after a reconnect' });
    });

    it('fails with "no document named …" for an unknown id', async () => {
      await expect(call('read_doc', { id: 'missing-page' })).rejects.toThrow('no document named "missing-page"');
    });
  });

  describe('slow_task', () => {
    it('waits the requested time', async () => {
      const started = Date.now();
      expect(await call('slow_task', { ms: 60 })).toEqual({ label: 'slow step', requestedMs: 60, waitedMs: 60, capped: false });
      expect(Date.now() - started).toBeGreaterThanOrEqual(55);
    });

    it('stops as soon as its signal aborts, with the abort reason', async () => {
      const controller = new AbortController();
      const pending = call('slow_task', { ms: SLOW_TASK_MAX_MS }, controller.signal);
      setTimeout(() => controller.abort(new Error('cancelled')), 20);
      await expect(pending).rejects.toThrow('cancelled');
    });
  });

  it.each(['weather', 'world_clock', 'calculator', 'search_docs', 'read_doc', 'slow_task'])('%s does nothing once its signal is aborted', async (name) => {
    const args: Record<string, Record<string, unknown>> = {
      weather: { city: 'Paris' },
      world_clock: { place: 'Tokyo' },
      calculator: { expression: '1+1' },
      search_docs: { query: 'replay' },
      read_doc: { id: 'replay' },
      slow_task: { ms: 10 },
    };
    await expect(call(name, args[name], AbortSignal.abort(new Error('run aborted')))).rejects.toThrow('run aborted');
  });
});
