import { Role, TaskState, type Message, type StreamResponse } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import { parseToolCall } from '../../src/extensions';

export type ClientKind = 'JSON-RPC 1.0' | 'HTTP+JSON 1.0' | 'JSON-RPC 0.3';
export const CLIENT_KINDS: ClientKind[] = ['JSON-RPC 1.0', 'HTTP+JSON 1.0', 'JSON-RPC 0.3'];

/**
 * A real @a2a-js/sdk client from the served agent card: the 1.0 ClientFactory preferring one
 * binding, or the 0.3 compat client reading the card the way a 0.3 client does (top-level `url`).
 */
export async function sdkClient(base: string, kind: ClientKind): Promise<Client> {
  if (kind === 'JSON-RPC 0.3') {
    const raw = (await (await fetch(`${base}/.well-known/agent-card.json`)).json()) as Record<string, unknown>;
    const { supportedInterfaces: _v1, ...legacyView } = raw;
    const factory = new ClientFactory({ transports: [new JsonRpcTransportFactory({ legacyCompat: { enabled: true } })] });
    return factory.createFromAgentCard(parseLegacyAgentCard(legacyView));
  }
  const preferred = kind === 'JSON-RPC 1.0' ? 'JSONRPC' : 'HTTP+JSON';
  return new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [preferred] })).createFromUrl(base);
}

export function userMessage(text: string, contextId = ''): Message {
  return {
    messageId: `m-${Math.random().toString(36).slice(2)}`,
    contextId,
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** A stream as readable lines: `task`, `WORKING: thinking`, `started weather`, `answer: …`, `COMPLETED`. */
export function describeEvent(event: StreamResponse): string {
  const payload = event.payload;
  switch (payload?.$case) {
    case 'task':
      return 'task';
    case 'message':
      return 'message';
    case 'statusUpdate': {
      const status = payload.value.status;
      const state = TaskState[status?.state ?? TaskState.TASK_STATE_UNSPECIFIED].replace('TASK_STATE_', '');
      const text = status?.message?.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
      return text ? `${state}: ${text}` : state;
    }
    case 'artifactUpdate': {
      const frame = parseToolCall(payload.value.artifact?.parts);
      if (frame) return `${frame.phase} ${frame.name}`;
      const text = payload.value.artifact?.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
      return `${payload.value.artifact?.name}: ${text}`;
    }
    default:
      return 'empty';
  }
}

export async function drain(events: AsyncIterable<StreamResponse>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  for await (const event of events) out.push(event);
  return out;
}
