import { AgentCard } from '@a2a-js/sdk';
import { TOOL_CALL_V1_EXTENSION_URI, toolCallV1AgentExtension } from '../extensions';
import { resolveA2aConfig } from './a2a.module-definition';
import { AgentCardService } from './agent-card.service';

describe('AgentCardService', () => {
  const service = (options = {}) => new AgentCardService(resolveA2aConfig(options), [toolCallV1AgentExtension()]);

  it('declares JSON-RPC and HTTP+JSON at 1.0 (and JSON-RPC at 0.3), streaming and tool-call-v1', () => {
    const card = service().card('https://agents.example.com/api');
    expect(card.supportedInterfaces).toEqual([
      { url: 'https://agents.example.com/api/a2a', protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
      { url: 'https://agents.example.com/api', protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
      { url: 'https://agents.example.com/api/a2a', protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' },
    ]);
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: false });
    expect(card.capabilities?.extensions.map((e) => e.uri)).toEqual([TOOL_CALL_V1_EXTENSION_URI]);
    expect(card.skills[0]).toMatchObject({ id: 'assistant' });
    expect(card.defaultInputModes).toEqual(['text/plain', 'application/json']);
  });

  it('takes name, skills and modes from the options, and prefers the configured public URL', () => {
    const cards = service({
      publicUrl: 'https://public.example.com/base/',
      card: { name: 'Support', version: '2.1.0', skills: [{ id: 's', name: 'S', description: 'd', tags: ['t'] }], defaultOutputModes: ['text/plain'] },
    });
    const base = cards.baseUrl('http://internal:3000');
    expect(base).toBe('https://public.example.com/base');
    const card = cards.card(base);
    expect(card).toMatchObject({ name: 'Support', version: '2.1.0', defaultOutputModes: ['text/plain'] });
    expect(card.skills).toEqual([expect.objectContaining({ id: 's', tags: ['t'], examples: [] })]);
  });

  it('serves a superset card: 1.0 ProtoJSON readable by the SDK, plus the 0.3 top-level fields', () => {
    const json = service().cardJson('http://h:1');
    expect(json).toMatchObject({ url: 'http://h:1/a2a', preferredTransport: 'JSONRPC', protocolVersion: '0.3' });
    expect(AgentCard.fromJSON(json).supportedInterfaces[0].protocolVersion).toBe('1.0');
  });

  it('fails at boot on a nonsensical number option', () => {
    expect(() => resolveA2aConfig({ keepAliveMs: 0 })).toThrow('keepAliveMs must be a positive whole number');
    expect(() => resolveA2aConfig({ maxEventsPerTask: Number.NaN })).toThrow('maxEventsPerTask');
  });
});
