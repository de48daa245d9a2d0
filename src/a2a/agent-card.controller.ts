import { Controller, Get, Header, Req } from '@nestjs/common';
import type { Request } from 'express';
import { AGENT_CARD_WELL_KNOWN_PATH } from './a2a.constants';
import { AgentCardService } from './agent-card.service';

@Controller()
export class AgentCardController {
  constructor(private readonly cards: AgentCardService) {}

  /** GET /.well-known/agent-card.json; Express adds the ETag and answers 304 when it matches. */
  @Get(AGENT_CARD_WELL_KNOWN_PATH)
  @Header('Cache-Control', 'public, max-age=300')
  card(@Req() req: Request): Record<string, unknown> {
    // The path before the well-known suffix keeps a global prefix ("/api/.well-known/…" → "/api").
    const path = req.originalUrl.split('?')[0];
    const prefix = path.slice(0, path.length - `/${AGENT_CARD_WELL_KNOWN_PATH}`.length);
    return this.cards.cardJson(this.cards.baseUrl(`${req.protocol}://${req.get('host') ?? 'localhost'}${prefix}`));
  }
}
