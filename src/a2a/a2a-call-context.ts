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

/**
 * Earlier negotiations per card extension list, by the requests' header values: clients send the
 * same few headers on every request, and negotiating is on every request's path. Bounded: past
 * MAX_REMEMBERED distinct header sets, the rest are negotiated each time.
 */
const remembered = new WeakMap<readonly AgentExtension[], Map<string, Negotiated>>();
const MAX_REMEMBERED = 64;
const VERSION_HEADER = A2A_VERSION_HEADER.toLowerCase();
const EXTENSIONS_HEADER = A2A_EXTENSIONS_HEADER.toLowerCase();
const EXTENSIONS_HEADER_V03 = A2A_EXTENSIONS_HEADER_V03.toLowerCase();

function negotiated(source: NegotiationSource, cardExtensions: readonly AgentExtension[], framesWhenNoHeader: boolean): Negotiated {
  const key = rememberKey(source, framesWhenNoHeader);
  let byKey = remembered.get(cardExtensions);
  const known = key === undefined ? undefined : byKey?.get(key);
  if (known) return known;
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
  if (key !== undefined) {
    if (!byKey) remembered.set(cardExtensions, (byKey = new Map()));
    if (byKey.size < MAX_REMEMBERED) byKey.set(key, result);
  }
  return result;
}

/**
 * The key of what negotiation reads: the version header and the two extension headers, each a
 * single value or absent (header values cannot hold a NUL). Undefined (not remembered) for a
 * version given as a query parameter, or a header sent more than once.
 */
function rememberKey(source: NegotiationSource, framesWhenNoHeader: boolean): string | undefined {
  const { headers } = source;
  const version = headers[VERSION_HEADER];
  const extensions = headers[EXTENSIONS_HEADER];
  const extensionsV03 = headers[EXTENSIONS_HEADER_V03];
  if (typeof version !== 'string' && (version !== undefined || versionParameter(source) !== undefined)) return undefined;
  if (typeof extensions === 'object' || typeof extensionsV03 === 'object') return undefined;
  return `${framesWhenNoHeader ? 1 : 0}\0${version ?? '\0'}\0${extensions ?? '\0'}\0${extensionsV03 ?? '\0'}`;
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
