import fc from 'fast-check';
import { parseSseStream } from '@a2a-js/sdk';
import { A2aClientError } from './errors';
import { SseParser, readSse, type SseMessage } from './sse';

function parseAll(chunks: string[], max?: number): SseMessage[] {
  const out: SseMessage[] = [];
  const parser = new SseParser((m) => out.push(m), max);
  for (const c of chunks) parser.push(c);
  parser.end();
  return out;
}

function splitAt(text: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const chunks: string[] = [];
  let last = 0;
  for (const p of points) {
    chunks.push(text.slice(last, p));
    last = p;
  }
  chunks.push(text.slice(last));
  return chunks;
}

/** The UTF-8 bytes of `text` cut at arbitrary byte offsets (through multi-byte characters too). */
function bodyOf(text: string, cuts: number[]): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  return new ReadableStream({
    start(controller) {
      let last = 0;
      for (const p of [...points, bytes.length]) {
        controller.enqueue(bytes.slice(last, p));
        last = p;
      }
      controller.close();
    },
  });
}

describe('SseParser', () => {
  it('reads ids, event types, multi-line data and retry; skips comments', () => {
    const text = ': keep-alive\n\nid: 7\nevent: update\ndata: {"a":\ndata:1}\nretry: 1500\n\ndata: no space\n\n';
    expect(parseAll([text])).toEqual([
      { id: '7', event: 'update', data: '{"a":\n1}', retry: 1500 },
      // the last id persists, as in EventSource
      { id: '7', event: 'message', data: 'no space', retry: 1500 },
    ]);
  });

  it('accepts CR, LF and CRLF line ends, a BOM, and fields without a colon', () => {
    expect(parseAll(['\uFEFFdata: a\r\rdata: b\r\n\r\ndata\n\n'])).toEqual([
      { event: 'message', data: 'a' },
      { event: 'message', data: 'b' },
      { event: 'message', data: '' },
    ]);
  });

  it('discards an event cut off by the end of the stream', () => {
    expect(parseAll(['id: 1\ndata: complete\n\nid: 2\ndata: cut'])).toEqual([{ id: '1', event: 'message', data: 'complete' }]);
  });

  it('refuses an event larger than the limit with a clear error', () => {
    expect(() => parseAll([`data: ${'x'.repeat(100)}\n`, 'data: more\n'], 64)).toThrow(
      new A2aClientError('an SSE event exceeds 64 characters'),
    );
    expect(() => parseAll(['data: ' + 'y'.repeat(100)], 64)).toThrow(A2aClientError);
  });

  it('reads a multi-MiB event fed in small chunks in linear time: each character is searched a bounded number of times', () => {
    const size = 6 * 1024 * 1024;
    const text = `id: 9\ndata: ${'x'.repeat(size)}\n\n`;
    const chunks: string[] = [];
    for (let at = 0; at < text.length; at += 16 * 1024) chunks.push(text.slice(at, at + 16 * 1024));
    // Every search for a line end goes through indexOf: count the characters each one may scan.
    let scanned = 0;
    const indexOf = String.prototype.indexOf;
    const spy = jest.spyOn(String.prototype, 'indexOf').mockImplementation(function (this: string, search: string, from?: number) {
      scanned += this.length - (from ?? 0);
      return indexOf.call(this, search, from);
    });
    let out: SseMessage[];
    try {
      out = parseAll(chunks);
    } finally {
      spy.mockRestore();
    }
    expect(out).toEqual([{ id: '9', event: 'message', data: 'x'.repeat(size) }]);
    // A parser that rescanned its buffer on every chunk would scan about size²/(2 × 16 KiB): 1.2e9 here.
    expect(scanned).toBeLessThan(8 * text.length);
  });

  it('gives the same events however the stream is chunked (CRLF split across chunks included)', () => {
    const text = 'id: 1\r\ndata: {"x":1}\r\n\r\n: ping\r\nid: 2\r\ndata: a\r\ndata: b\r\n\r\nid: 3\rdata: é✓\r\r';
    const whole = parseAll([text]);
    expect(whole).toHaveLength(3);
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 12 }), (cuts) => {
        expect(parseAll(splitAt(text, cuts))).toEqual(whole);
      }),
    );
  });

  it('agrees with the A2A SDK parser on non-empty data events of any content', async () => {
    // (An empty `data:` line is an event per WHATWG; the SDK's parser drops it, so it is left out.)
    const payload = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).filter((s) => !/[\r\n]/.test(s));
    await fc.assert(
      fc.asyncProperty(fc.array(payload, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(), { maxLength: 6 }), async (datas, cuts) => {
        const text = datas.map((d, i) => `id: ${i}\ndata: ${d}\n\n`).join('');
        const ours: string[] = [];
        for await (const m of readSse(bodyOf(text, cuts))) ours.push(m.data);
        const theirs: string[] = [];
        for await (const e of parseSseStream(new Response(text))) theirs.push(e.data);
        expect(ours).toEqual(theirs);
      }),
      { numRuns: 50 },
    );
  });
});
