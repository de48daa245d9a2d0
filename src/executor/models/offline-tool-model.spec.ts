import { tool } from '@langchain/core/tools';
import { Test } from '@nestjs/testing';
import { z } from 'zod';
import { ExecutorModule } from '../executor.module';
import { AgentExecutor } from '../executor.types';
import { expectWellFormed, framesOf, runToEnd } from '../fixtures/run-recorder';
import { OfflineToolModel } from './offline-tool-model';
import { describeTools, parseToolRequest, splitOnAnd, type ToolSignature } from './tool-request';

const stockPrice = tool(async ({ ticker, days }) => ({ ticker, price: ticker === 'ACME' ? 42 : 7, days: days ?? 1 }), {
  name: 'stock_price',
  description: 'Latest price of a stock',
  schema: z.object({ ticker: z.string().describe('the symbol'), days: z.number().int().optional() }),
});
const note = tool(async ({ text, tags }) => `noted "${text}" (${(tags ?? []).join(', ')})`, {
  name: 'note',
  description: 'Writes a note',
  schema: z.object({ text: z.string(), tags: z.array(z.string()).optional(), pinned: z.boolean().optional() }),
});

async function run(request: string) {
  const moduleRef = await Test.createTestingModule({
    imports: [ExecutorModule.forRoot({ tools: [stockPrice, note], model: new OfflineToolModel() })],
  }).compile();
  const events = await runToEnd(moduleRef.get(AgentExecutor).run(request, { correlationId: 't' }));
  expectWellFormed(events);
  const last = events[events.length - 1].event;
  return { frames: framesOf(events), reply: last.type === 'reply' ? last.text : `(${last.type})` };
}

describe('OfflineToolModel (through the default agent)', () => {
  it('calls a host tool named with key=value pairs, read as the schema types, and answers from its result', async () => {
    const { frames, reply } = await run('stock_price ticker=ACME days=3');
    expect(frames.map((f) => `${f.phase}:${f.name}`)).toEqual(['started:stock_price', 'completed:stock_price']);
    expect(frames[0]).toMatchObject({ args: { ticker: 'ACME', days: 3 } });
    expect(frames[1]).toMatchObject({ result: { ticker: 'ACME', price: 42, days: 3 } });
    expect(reply).toBe('stock_price: ticker ACME, price 42, days 3.');
  });

  it('takes a JSON object, and runs clauses joined by "and" as parallel calls', async () => {
    const { frames, reply } = await run('stock_price {"ticker":"ACME"} and stock_price ticker=XYZ and note text="buy and hold" tags=["a","b"]');
    expect(frames.filter((f) => f.phase === 'started').map((f) => [f.name, f.args])).toEqual([
      ['stock_price', { ticker: 'ACME' }],
      ['stock_price', { ticker: 'XYZ' }],
      ['note', { text: 'buy and hold', tags: ['a', 'b'] }],
    ]);
    // All three start before any completes: one model turn, one parallel tools step.
    expect(frames.slice(0, 3).every((f) => f.phase === 'started')).toBe(true);
    expect(reply).toBe('stock_price: ticker ACME, price 42, days 1. stock_price: ticker XYZ, price 7, days 1. note: noted "buy and hold" (a, b).');
  });

  it('fails a call with a bad argument, naming it', async () => {
    const wrongType = await run('stock_price ticker=ACME days=soon');
    expect(wrongType.frames.map((f) => f.phase)).toEqual(['started', 'failed']);
    expect(wrongType.frames[1]).toMatchObject({ phase: 'failed', error: expect.stringMatching(/expected number.*\n.*at days/) });
    expect(wrongType.reply).toMatch(/^stock_price failed: Received tool input did not match expected schema/);

    const missing = await run('stock_price days=2');
    expect(missing.frames[1]).toMatchObject({ phase: 'failed', error: expect.stringContaining('at ticker') });

    const unknown = await run('stock_price tickr=ACME');
    expect(unknown.frames[1]).toMatchObject({ phase: 'failed', error: expect.stringContaining('unknown argument "tickr" (stock_price takes ticker, days)') });
  });

  it('answers a request it cannot read with the tools and their arguments', async () => {
    const { frames, reply } = await run('what is the price of ACME?');
    expect(frames).toEqual([]);
    expect(reply).toContain('- stock_price(ticker: string, days?: integer): Latest price of a stock');
    expect(reply).toContain('- note(text: string, tags?: array, pinned?: boolean): Writes a note');
    expect(reply).toContain('e.g. "stock_price ticker=…"');
  });
});

describe('reading tool requests', () => {
  const tools: ToolSignature[] = [
    { name: 'stock_price', description: '', parameters: { properties: { ticker: { type: 'string' }, days: { type: 'integer' } } } },
    { name: 'stock', description: '', parameters: { properties: { q: { type: 'string' }, live: { type: 'boolean' } } } },
  ];

  it('splits on "and" outside quotes and JSON only', () => {
    expect(splitOnAnd('a x=1 and b {"k":"this and that"} AND c y="p and q"')).toEqual(['a x=1', 'b {"k":"this and that"}', 'c y="p and q"']);
  });

  it('reads plain, quoted and JSON values, the longest tool name first', () => {
    expect(parseToolRequest('stock_price ticker=ACME days=3', tools)).toEqual([{ name: 'stock_price', args: { ticker: 'ACME', days: 3 } }]);
    expect(parseToolRequest('stock q=big red apples live=true', tools)).toEqual([{ name: 'stock', args: { q: 'big red apples', live: true } }]);
    expect(parseToolRequest("stock q='it''s' live=TRUE", tools)).toBeUndefined();
    expect(parseToolRequest('Stock_Price ticker="A \\"B\\"" days=2?', tools)).toEqual([{ name: 'stock_price', args: { ticker: 'A "B"', days: 2 } }]);
    expect(parseToolRequest('stock_price', tools)).toEqual([{ name: 'stock_price', args: {} }]);
    // Not a number: left as written, for the tool's own schema to refuse by name.
    expect(parseToolRequest('stock_price days=3.5x', tools)).toEqual([{ name: 'stock_price', args: { days: '3.5x' } }]);
  });

  it('reads nothing when any clause is not a tool call', () => {
    expect(parseToolRequest('stock_price ticker=A and what about B', tools)).toBeUndefined();
    expect(parseToolRequest('stock_price in Paris', tools)).toBeUndefined();
    expect(parseToolRequest('stock_price {"ticker":', tools)).toBeUndefined();
    expect(parseToolRequest('stock_price [1,2]', tools)).toBeUndefined();
    expect(parseToolRequest('stockpile x=1', tools)).toBeUndefined();
    expect(parseToolRequest('   ', tools)).toBeUndefined();
  });

  it('describes no tools plainly', () => {
    expect(describeTools([])).toBe('I have no tools to call.');
  });
});
