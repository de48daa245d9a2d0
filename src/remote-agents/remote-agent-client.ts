/**
 * The official @a2a-js/sdk client for one remote agent: its card discovered at the URL, A2A 1.0
 * when the card offers it and 0.3 otherwise (the SDK's compat transports), JSON-RPC or HTTP+JSON
 * as the card prefers, with the agent's credentials on every request.
 */
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import type { AgentCard } from '@a2a-js/sdk';
import { injectTraceHeaders } from '../tracing/trace-context';

export interface RemoteAgentConnection {
  client: Client;
  card: AgentCard;
}

/**
 * `fetch` with these headers on every request (the caller's own headers win), and the active
 * trace context (`traceparent`), so the remote agent's spans join the delegating tool call's trace.
 */
export function fetchWithHeaders(headers: Readonly<Record<string, string>>, base: typeof fetch = fetch): typeof fetch {
  return (input, init) => {
    const merged = injectTraceHeaders(new Headers(headers));
    new Headers(init?.headers).forEach((value, key) => merged.set(key, value));
    return base(input, { ...init, headers: merged });
  };
}

/** A card URL: the agent's base URL (card at `/.well-known/agent-card.json`) or the card's own URL. */
function cardLocation(url: string): [string, string | undefined] {
  return new URL(url).pathname.endsWith('.json') ? [url, ''] : [url, undefined];
}

/** Reads the card and builds the client; rejects when the agent cannot be reached or its card read. */
export async function connectRemoteAgent(url: string, fetchImpl: typeof fetch): Promise<RemoteAgentConnection> {
  const legacyCompat = { enabled: true };
  const resolver = new DefaultAgentCardResolver({ fetchImpl, legacyCompat });
  const [base, path] = cardLocation(url);
  const card = await resolver.resolve(base, path);
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat }), new RestTransportFactory({ fetchImpl, legacyCompat })],
    cardResolver: resolver,
  });
  return { client: await factory.createFromAgentCard(card), card };
}
