/**
 * Agent discovery: reads the agent card and picks the interface this client speaks. A2A 1.0
 * cards list `supportedInterfaces` (url, protocolBinding, protocolVersion); 0.3 cards give a
 * main `url` + `preferredTransport` + `additionalInterfaces`, all at the card's `protocolVersion`.
 */
import { TOOL_CALL_V1_EXTENSION_URI } from '../extensions/tool-call-v1';
import { A2aClientError, errorMessage } from './errors';

export const AGENT_CARD_PATH = '/.well-known/agent-card.json';

export type A2aBinding = 'JSONRPC' | 'HTTP+JSON';
export type A2aProtocolVersion = '1.0' | '0.3';

export interface A2aEndpoint {
  /** Absolute URL: the JSON-RPC endpoint, or the HTTP+JSON base URL. */
  url: string;
  binding: A2aBinding;
  protocolVersion: A2aProtocolVersion;
}

export interface DiscoveredAgent {
  /** The card as the server sent it. */
  card: Record<string, unknown>;
  endpoint: A2aEndpoint;
  /** Whether the card declares tool-call-v1 under `capabilities.extensions`. */
  toolCallV1: boolean;
}

export interface EndpointPreference {
  binding?: A2aBinding;
  protocolVersion?: A2aProtocolVersion;
}

type Rec = Record<string, unknown>;
const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** "1.0", "1.0.0" → "1.0"; "0.3", "0.3.0" → "0.3"; anything else is not spoken here. */
function majorMinor(version: unknown): A2aProtocolVersion | undefined {
  if (typeof version !== 'string') return undefined;
  const [major, minor] = version.split('.');
  const mm = `${major}.${minor ?? '0'}`;
  return mm === '1.0' || mm === '0.3' ? mm : undefined;
}

function binding(value: unknown): A2aBinding | undefined {
  if (value === 'JSONRPC' || value === 'HTTP+JSON') return value;
  return undefined;
}

function absolute(url: unknown, cardUrl: string): string | undefined {
  if (typeof url !== 'string' || url.length === 0) return undefined;
  try {
    return new URL(url, cardUrl).toString();
  } catch {
    return undefined;
  }
}

/** Every interface of the card this client can speak, in the card's order. */
export function cardEndpoints(card: Rec, cardUrl: string): A2aEndpoint[] {
  const out: A2aEndpoint[] = [];
  const add = (url: unknown, b: unknown, v: unknown): void => {
    const endpoint = { url: absolute(url, cardUrl), binding: binding(b), protocolVersion: majorMinor(v) };
    if (endpoint.url && endpoint.binding && endpoint.protocolVersion) out.push(endpoint as A2aEndpoint);
  };
  if (Array.isArray(card.supportedInterfaces)) {
    for (const i of card.supportedInterfaces) if (isRecord(i)) add(i.url, i.protocolBinding, i.protocolVersion);
  }
  // A2A 0.3 card shape.
  if (typeof card.url === 'string') {
    add(card.url, card.preferredTransport ?? 'JSONRPC', card.protocolVersion ?? '0.3');
    if (Array.isArray(card.additionalInterfaces)) {
      for (const i of card.additionalInterfaces) if (isRecord(i)) add(i.url, i.transport, card.protocolVersion ?? '0.3');
    }
  }
  return out;
}

/** Lower is better: a stated preference first, then 1.0 before 0.3, then JSON-RPC before HTTP+JSON. */
const rank = (e: A2aEndpoint, prefer: EndpointPreference): number =>
  (prefer.protocolVersion && e.protocolVersion !== prefer.protocolVersion ? 8 : 0) +
  (prefer.binding && e.binding !== prefer.binding ? 4 : 0) +
  (e.protocolVersion === '1.0' ? 0 : 2) +
  (e.binding === 'JSONRPC' ? 0 : 1);

/** The best interface for this client; throws when the card offers none it speaks. */
export function selectEndpoint(card: unknown, cardUrl: string, prefer: EndpointPreference = {}): A2aEndpoint {
  if (!isRecord(card)) throw new A2aClientError(`the agent card at ${cardUrl} is not a JSON object`);
  const endpoints = cardEndpoints(card, cardUrl);
  if (endpoints.length === 0) {
    throw new A2aClientError(
      `the agent card at ${cardUrl} lists no interface this client speaks (JSONRPC or HTTP+JSON, A2A 1.0 or 0.3)`,
    );
  }
  // sort is stable: the card's own order breaks ties.
  return [...endpoints].sort((a, b) => rank(a, prefer) - rank(b, prefer))[0];
}

export function declaresToolCallV1(card: unknown): boolean {
  if (!isRecord(card) || !isRecord(card.capabilities)) return false;
  const extensions = card.capabilities.extensions;
  return Array.isArray(extensions) && extensions.some((e) => isRecord(e) && e.uri === TOOL_CALL_V1_EXTENSION_URI);
}

export interface DiscoverOptions {
  prefer?: EndpointPreference;
  /**
   * The card's own URL, when it is not at the well-known path of `baseUrl`'s origin: an agent
   * mounted under a prefix (`A2aModule.forRoot({ path })`) serves it at
   * `<prefix>/.well-known/agent-card.json`.
   */
  cardUrl?: string;
  signal?: AbortSignal;
  fetch?: typeof fetch;
}

/**
 * Fetches the agent card (`/.well-known/agent-card.json` at `baseUrl`'s origin, or
 * `options.cardUrl`) and picks the interface to use.
 */
export async function discoverAgent(baseUrl: string, options: DiscoverOptions = {}): Promise<DiscoveredAgent> {
  const doFetch = options.fetch ?? fetch;
  let cardUrl: string;
  try {
    cardUrl = new URL(options.cardUrl ?? AGENT_CARD_PATH, baseUrl).toString();
  } catch {
    throw new A2aClientError(`not a URL: ${JSON.stringify(options.cardUrl ?? baseUrl)}`);
  }
  let response: Response;
  try {
    response = await doFetch(cardUrl, { headers: { Accept: 'application/json' }, signal: options.signal });
  } catch (err) {
    if (options.signal?.aborted) throw err;
    throw new A2aClientError(`could not fetch the agent card at ${cardUrl}: ${errorMessage(err)}`, { retryable: true });
  }
  if (!response.ok) {
    throw new A2aClientError(`the agent card at ${cardUrl} answered HTTP ${response.status}`, {
      status: response.status,
    });
  }
  let card: unknown;
  try {
    card = await response.json();
  } catch {
    throw new A2aClientError(`the agent card at ${cardUrl} is not valid JSON`);
  }
  const endpoint = selectEndpoint(card, cardUrl, options.prefer);
  return { card: card as Rec, endpoint, toolCallV1: declaresToolCallV1(card) };
}
