/**
 * Extension activation over HTTP headers (A2A 1.0 `A2A-Extensions`, 0.3 `X-A2A-Extensions`).
 * Framework-free: accepts Node's IncomingHttpHeaders, a Fetch `Headers`, or a plain record.
 */
import { TOOL_CALL_V1_EXTENSION_URI } from './tool-call-v1';

export const A2A_EXTENSIONS_HEADER = 'A2A-Extensions';
export const A2A_EXTENSIONS_HEADER_V03 = 'X-A2A-Extensions';

export type HeaderValue = string | readonly string[] | undefined;
export type HeaderSource = { get(name: string): string | null } | Readonly<Record<string, HeaderValue>>;

function isFetchHeaders(h: HeaderSource): h is { get(name: string): string | null } {
  return typeof (h as { get?: unknown }).get === 'function';
}

/** Every value of one header, case-insensitively, repeated headers included. */
function headerValues(headers: HeaderSource, name: string): string[] {
  if (isFetchHeaders(headers)) {
    const v = headers.get(name);
    return v === null ? [] : [v];
  }
  const wanted = name.toLowerCase();
  const out: string[] = [];
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() !== wanted) continue;
    const v = headers[key];
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) for (const item of v) if (typeof item === 'string') out.push(item);
  }
  return out;
}

/** Splits comma-separated URI lists, trims, drops blanks and duplicates, keeps first-seen order. */
export function parseExtensionList(values: readonly string[]): string[] {
  const seen = new Set<string>();
  for (const value of values) {
    for (const raw of value.split(',')) {
      const uri = raw.trim();
      if (uri) seen.add(uri);
    }
  }
  return [...seen];
}

/**
 * The extension URIs a request asks for, from `A2A-Extensions` and `X-A2A-Extensions`
 * merged; `undefined` when the request sends neither header (or only blank values),
 * which callers may treat differently from an explicit list.
 */
export function requestedExtensions(headers: HeaderSource | undefined): string[] | undefined {
  if (!headers) return undefined;
  const values = [
    ...headerValues(headers, A2A_EXTENSIONS_HEADER),
    ...headerValues(headers, A2A_EXTENSIONS_HEADER_V03),
  ];
  const uris = parseExtensionList(values);
  return uris.length > 0 ? uris : undefined;
}

/** The requested URIs this agent supports, in the order asked: the list to echo back. */
export function activatedExtensions(requested: readonly string[] | undefined, supported: readonly string[]): string[] {
  if (!requested) return [];
  const known = new Set(supported);
  return requested.filter((uri) => known.has(uri));
}

/**
 * Whether tool-call-v1 frames go to this client: yes when it lists the URI; when it sends no
 * extension header at all, `whenNoHeader` decides (default on, so plain clients see frames);
 * a client listing only other extensions gets none.
 */
export function isToolCallV1Active(
  requested: readonly string[] | undefined,
  options: { whenNoHeader?: boolean } = {},
): boolean {
  if (!requested) return options.whenNoHeader ?? true;
  return requested.includes(TOOL_CALL_V1_EXTENSION_URI);
}
