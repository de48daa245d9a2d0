import { Inject, Injectable } from '@nestjs/common';
import { AgentCard, type AgentExtension, type AgentInterface } from '@a2a-js/sdk';
import { duplicateInterfacesForLegacy } from '@a2a-js/sdk/compat/v0_3';
import { AGENT_EXTENSIONS } from '../extensions';
import { A2A_CONFIG, JSON_RPC_PATH } from './a2a.constants';
import type { A2aConfig } from './a2a.module-definition';

/**
 * The agent card (A2A 1.0) from the module options: the JSON-RPC and HTTP+JSON interfaces at
 * protocol version 1.0, a 0.3 mirror of the JSON-RPC one, streaming, and the extensions.
 */
@Injectable()
export class AgentCardService {
  constructor(
    @Inject(A2A_CONFIG) private readonly config: A2aConfig,
    @Inject(AGENT_EXTENSIONS) private readonly extensions: AgentExtension[],
  ) {}

  /** The base URL interfaces hang off: the configured public URL, else the one the card was asked at. */
  baseUrl(requestBase: string): string {
    return this.config.publicUrl ?? requestBase;
  }

  card(baseUrl: string): AgentCard {
    const { card } = this.config;
    const interfaces: AgentInterface[] = [
      { url: `${baseUrl}/${JSON_RPC_PATH}`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
      { url: baseUrl, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
    ];
    return {
      name: card.name,
      description: card.description,
      version: card.version,
      supportedInterfaces: duplicateInterfacesForLegacy(interfaces, ['JSONRPC']),
      provider: card.provider,
      documentationUrl: card.documentationUrl,
      iconUrl: card.iconUrl,
      capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false, extensions: this.extensions },
      securitySchemes: {},
      securityRequirements: [],
      defaultInputModes: card.defaultInputModes,
      defaultOutputModes: card.defaultOutputModes,
      skills: card.skills.map((skill) => ({
        id: skill.id,
        name: skill.name,
        description: skill.description,
        tags: skill.tags ?? [],
        examples: skill.examples ?? [],
        inputModes: skill.inputModes ?? [],
        outputModes: skill.outputModes ?? [],
        securityRequirements: [],
      })),
      signatures: [],
    };
  }

  /**
   * The card's JSON: ProtoJSON of the 1.0 card, plus the 0.3 top-level fields (`url`,
   * `preferredTransport`, `protocolVersion`) so 0.3 clients find the JSON-RPC endpoint too. A 1.0
   * client reads `supportedInterfaces` and ignores them.
   */
  cardJson(baseUrl: string): Record<string, unknown> {
    const card = this.card(baseUrl);
    return {
      ...(AgentCard.toJSON(card) as Record<string, unknown>),
      url: `${baseUrl}/${JSON_RPC_PATH}`,
      preferredTransport: 'JSONRPC',
      protocolVersion: '0.3',
    };
  }
}
