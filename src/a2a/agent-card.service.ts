import { Inject, Injectable } from '@nestjs/common';
import { AgentCard, type AgentExtension, type AgentInterface } from '@a2a-js/sdk';
import { duplicateInterfacesForLegacy } from '@a2a-js/sdk/compat/v0_3';
import { A2A_CONFIG, A2A_EXTENSIONS, JSON_RPC_PATH } from './a2a.constants';
import type { A2aConfig } from './a2a.module-definition';
import { legacySecurityDeclaration, securityDeclaration } from './auth/a2a-auth.service';

/**
 * The agent card (A2A 1.0) from the module options: the JSON-RPC and HTTP+JSON interfaces at
 * protocol version 1.0, a 0.3 mirror of the JSON-RPC one, streaming, the extensions, and the
 * credentials A2aAuthGuard accepts (securitySchemes; either one satisfies securityRequirements).
 */
@Injectable()
export class AgentCardService {
  constructor(
    @Inject(A2A_CONFIG) private readonly config: A2aConfig,
    @Inject(A2A_EXTENSIONS) private readonly extensions: AgentExtension[],
  ) {}

  /** The base URL interfaces hang off: the configured public URL, else the one the card was asked at. */
  baseUrl(requestBase: string): string {
    return this.config.publicUrl ?? requestBase;
  }

  card(baseUrl: string): AgentCard {
    const { card } = this.config;
    const { securitySchemes, securityRequirements } = securityDeclaration(this.config.auth);
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
      securitySchemes,
      securityRequirements,
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
   * `preferredTransport`, `protocolVersion`, `security`) so 0.3 clients find the JSON-RPC endpoint
   * and the credentials too. Each security scheme holds both shapes (1.0's `apiKeySecurityScheme`
   * beside 0.3's `type`/`in`/`name`). A 1.0 client reads its fields and ignores the others.
   */
  cardJson(baseUrl: string): Record<string, unknown> {
    const card = AgentCard.toJSON(this.card(baseUrl)) as Record<string, unknown>;
    const legacy = legacySecurityDeclaration(this.config.auth);
    const schemes = (card.securitySchemes ?? {}) as Record<string, Record<string, unknown>>;
    const securitySchemes = Object.fromEntries(Object.entries(schemes).map(([name, scheme]) => [name, { ...scheme, ...legacy.securitySchemes[name] }]));
    return {
      ...card,
      ...(legacy.security.length > 0 ? { securitySchemes, security: legacy.security } : {}),
      url: `${baseUrl}/${JSON_RPC_PATH}`,
      preferredTransport: 'JSONRPC',
      protocolVersion: '0.3',
    };
  }
}
