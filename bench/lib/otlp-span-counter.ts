/**
 * An OTLP/HTTP trace receiver for the observability section, in the harness process: it stands
 * for the collector a deployment runs next to its service (localhost:4318), answers every
 * export at once with 200, and counts the spans it received per path, so each server under
 * test exports to a path of its own. `http/protobuf` (the exporter's default) is counted by
 * walking the protobuf fields, without decoding the rest; `http/json` (bench/sdk-span-floor.ts
 * compares the two) by parsing it.
 */
import { createServer, type Server } from 'node:http';
import { gunzipSync } from 'node:zlib';

/** The spans in an ExportTraceServiceRequest: resource_spans (1) → scope_spans (2) → spans (2). */
export function countSpans(body: Buffer): number {
  let spans = 0;
  for (const resourceSpans of lengthDelimited(body, 0, body.length, 1)) {
    for (const scopeSpans of lengthDelimited(body, resourceSpans.start, resourceSpans.end, 2)) {
      spans += [...lengthDelimited(body, scopeSpans.start, scopeSpans.end, 2)].length;
    }
  }
  return spans;
}

/** The spans in an ExportTraceServiceRequest sent as `http/json`. */
export function countJsonSpans(body: Buffer): number {
  const request = JSON.parse(body.toString('utf8')) as { resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[] };
  let spans = 0;
  for (const resourceSpans of request.resourceSpans ?? []) for (const scopeSpans of resourceSpans.scopeSpans ?? []) spans += scopeSpans.spans?.length ?? 0;
  return spans;
}

/** The byte ranges of field `wanted` (wire type 2) in a message, skipping every other field. */
function* lengthDelimited(buf: Buffer, start: number, end: number, wanted: number): Generator<{ start: number; end: number }> {
  let at = start;
  const varint = (): number => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      if (at >= end) throw new Error('OTLP receiver: truncated varint');
      const byte = buf[at++];
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
  };
  while (at < end) {
    const tag = varint();
    const wireType = tag & 7;
    if (wireType === 0) varint();
    else if (wireType === 1) at += 8;
    else if (wireType === 5) at += 4;
    else if (wireType === 2) {
      const length = varint();
      if (tag >>> 3 === wanted) yield { start: at, end: at + length };
      at += length;
    } else throw new Error(`OTLP receiver: unexpected wire type ${wireType}`);
  }
}

export class OtlpSpanCounter {
  private constructor(
    private readonly server: Server,
    readonly origin: string,
    /** Spans received, by request path. */
    private readonly spans: Map<string, number>,
  ) {}

  static async start(): Promise<OtlpSpanCounter> {
    const received = new Map<string, number>();
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const path = req.url ?? '/';
        const json = req.headers['content-type']?.includes('json') === true;
        // OTEL_EXPORTER_OTLP_COMPRESSION=gzip
        const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(Buffer.concat(chunks)) : Buffer.concat(chunks);
        received.set(path, (received.get(path) ?? 0) + (json ? countJsonSpans(body) : countSpans(body)));
        // An empty ExportTraceServiceResponse: everything accepted.
        res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : undefined);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('OTLP receiver: no TCP address');
    return new OtlpSpanCounter(server, `http://127.0.0.1:${address.port}`, received);
  }

  /** The traces endpoint (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) of one exporter. */
  endpoint(name: string): string {
    return `${this.origin}/${name}/v1/traces`;
  }

  /** Spans received so far at that endpoint. */
  received(name: string): number {
    return this.spans.get(`/${name}/v1/traces`) ?? 0;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
