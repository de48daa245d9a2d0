import type { IncomingHttpHeaders } from 'node:http';
import type { AgentExtension } from '@a2a-js/sdk';
import type { Context } from '@opentelemetry/api';
import {
  A2A_EXTENSIONS_HEADER,
  A2A_EXTENSIONS_HEADER_V03,
  TOOL_CALL_V1_EXTENSION_URI,
  activatedExtensions,
  isToolCallV1Active,
  requestedExtensions,
} from '../extensions';
import { callerTraceContext } from '../tracing';
import { A2A_VERSION_HEADER, PROTOCOL_VERSIONS, type ProtocolVersion } from './a2a.constants';
import { extensionSupportRequired, versionNotSupported } from './a2a-errors';
import type { CallerId } from './task-record';

/** What one request negotiated: protocol version, extensions, and who is calling. */
export interface A2aCallContext {
  version: ProtocolVersion;
  /** Whether this client receives tool-call-v1 frames. */
  toolFrames: boolean;
  /** The extension URIs to echo in the `A2A-Extensions` response header (shared between requests: read only). */
  activated: readonly string[];
  caller: CallerId;
  /** The caller's trace context (its `traceparent`, or the host's HTTP server span). */
  traceContext: Context;
}

/** The parts of an HTTP request the negotiation reads. */
export interface NegotiationSource {
  headers: IncomingHttpHeaders;
  query?: unknown;
}

/**
 * The version named by `A2A-Version` (header, or query parameter as the spec allows). Absent or
 * empty means 0.3; a patch level is ignored ("1.0.2" is 1.0); anything else is -32009.
 */
export function negotiateVersion(source: NegotiationSource): ProtocolVersion {
  const raw = versionParameter(source);
  if (raw === undefined || raw.trim() === '') return '0.3';
  const match = /^(\d+)\.(\d+)(?:\.\d+)?$/.exec(raw.trim());
  const majorMinor = match ? `${Number(match[1])}.${Number(match[2])}` : undefined;
  const version = PROTOCOL_VERSIONS.find((v) => v === majorMinor);
  if (!version) throw versionNotSupported(raw);
  return version;
}

/**
 * Negotiates a request: version, then extensions. tool-call-v1 frames go to a client that lists
 * the URI, and (by `framesWhenNoHeader`) to one that sends no extension header at all; a
 * required card extension the client did not list is -32008.
 */
export function negotiate(
  source: NegotiationSource,
  cardExtensions: readonly AgentExtension[],
  framesWhenNoHeader: boolean,
  caller: CallerId,
): A2aCallContext {
  const { version, toolFrames, activated } = negotiated(source, cardExtensions, framesWhenNoHeader);
  return { version, toolFrames, activated, caller, traceContext: callerTraceContext(source.headers) };
}

/** What a request's version and extension headers negotiate against one card's extensions. */
interface Negotiated {
  version: ProtocolVersion;
  toolFrames: boolean;
  activated: readonly string[];
}

/** A negotiation remembered with the header values (and option) it was made for. */
interface Remembered extends Negotiated {
  framesWhenNoHeader: boolean;
  versionHeader: string | undefined;
  extensionsHeader: string | undefined;
  extensionsHeaderV03: string | undefined;
}

/**
 * Earlier negotiations per card extension list, with the requests' header values: clients send
 * the same few headers on every request, and negotiating is on every request's path. Found by
 * comparing the values (no key string built and hashed per request); bounded: past
 * MAX_REMEMBERED distinct header sets, the rest are negotiated each time.
 */
const remembered = new WeakMap<readonly AgentExtension[], Remembered[]>();
const MAX_REMEMBERED = 64;
const VERSION_HEADER = A2A_VERSION_HEADER.toLowerCase();
const EXTENSIONS_HEADER = A2A_EXTENSIONS_HEADER.toLowerCase();
const EXTENSIONS_HEADER_V03 = A2A_EXTENSIONS_HEADER_V03.toLowerCase();

function negotiated(source: NegotiationSource, cardExtensions: readonly AgentExtension[], framesWhenNoHeader: boolean): Negotiated {
  const { headers } = source;
  const versionHeader = headers[VERSION_HEADER];
  const extensionsHeader = headers[EXTENSIONS_HEADER];
  const extensionsHeaderV03 = headers[EXTENSIONS_HEADER_V03];
  // Remembered only for single header values, and a version not given as a query parameter.
  const rememberable =
    (typeof versionHeader === 'string' || (versionHeader === undefined && versionParameter(source) === undefined)) &&
    typeof extensionsHeader !== 'object' &&
    typeof extensionsHeaderV03 !== 'object';
  let known = rememberable ? remembered.get(cardExtensions) : undefined;
  if (known) {
    for (const earlier of known) {
      if (
        earlier.versionHeader === versionHeader &&
        earlier.extensionsHeader === extensionsHeader &&
        earlier.extensionsHeaderV03 === extensionsHeaderV03 &&
        earlier.framesWhenNoHeader === framesWhenNoHeader
      ) {
        return earlier;
      }
    }
  }
  const version = negotiateVersion(source);
  const requested = requestedExtensions(source.headers);
  const missing = cardExtensions.filter((ext) => ext.required && !requested?.includes(ext.uri)).map((ext) => ext.uri);
  if (missing.length > 0) throw extensionSupportRequired(missing);
  const toolFrames = isToolCallV1Active(requested, { whenNoHeader: framesWhenNoHeader });
  const activated = activatedExtensions(
    requested,
    cardExtensions.map((ext) => ext.uri),
  );
  if (toolFrames && !activated.includes(TOOL_CALL_V1_EXTENSION_URI)) activated.unshift(TOOL_CALL_V1_EXTENSION_URI);
  const result: Negotiated = { version, toolFrames, activated: Object.freeze(activated) };
  if (rememberable) {
    if (!known) remembered.set(cardExtensions, (known = []));
    if (known.length < MAX_REMEMBERED) {
      known.push({ ...result, framesWhenNoHeader, versionHeader, extensionsHeader: extensionsHeader as string | undefined, extensionsHeaderV03: extensionsHeaderV03 as string | undefined });
    }
  }
  return result;
}

function versionParameter(source: NegotiationSource): string | undefined {
  const header = source.headers[VERSION_HEADER];
  if (typeof header === 'string') return header;
  if (Array.isArray(header)) return header[0];
  const query = source.query;
  if (typeof query === 'object' && query !== null) {
    const value = (query as Record<string, unknown>)[A2A_VERSION_HEADER];
    if (typeof value === 'string') return value;
  }
  return undefined;
}

/**
 * Each activated list's response headers, per version: made once, since the list is shared by
 * every request that negotiated alike (and is read only), and they are on every response's path.
 */
const headersOf = new WeakMap<readonly string[], Partial<Record<ProtocolVersion, Readonly<Record<string, string>>>>>();
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** The response headers echoing the activated extensions (also under the 0.3 name for 0.3 calls); shared, read only. */
export function extensionHeaders(ctx: A2aCallContext): Readonly<Record<string, string>> {
  if (ctx.activated.length === 0) return NO_HEADERS;
  let byVersion = headersOf.get(ctx.activated);
  if (!byVersion) headersOf.set(ctx.activated, (byVersion = {}));
  const known = byVersion[ctx.version];
  if (known) return known;
  const value = ctx.activated.join(', ');
  const headers: Record<string, string> = { [A2A_EXTENSIONS_HEADER]: value };
  if (ctx.version === '0.3') headers[A2A_EXTENSIONS_HEADER_V03] = value;
  return (byVersion[ctx.version] = Object.freeze(headers));
}
