import { Controller, Get, Header, Res, VERSION_NEUTRAL } from '@nestjs/common';
import { A2aRoute } from './a2a-route';
import type { Response } from 'express';
import { AGENT_CARD_WELL_KNOWN_PATH } from './a2a.constants';
import { AgentCardService } from './agent-card.service';

/**
 * The card answers through its response itself (as the A2A routes do), so a host's global
 * interceptor that maps handlers' results cannot wrap it; VERSION_NEUTRAL keeps it at its
 * well-known path under a host's URI versioning.
 */
@Controller({ version: VERSION_NEUTRAL })
@A2aRoute()
export class AgentCardController {
  constructor(private readonly cards: AgentCardService) {}

  /** GET /.well-known/agent-card.json; Express adds the ETag and answers 304 when it matches. */
  @Get(AGENT_CARD_WELL_KNOWN_PATH)
  @Header('Cache-Control', 'public, max-age=300')
  card(@Res() res: Response): void {
    const req = res.req;
    // The path before the well-known suffix keeps a global prefix ("/api/.well-known/…" → "/api").
    const path = req.originalUrl.split('?')[0];
    const prefix = path.slice(0, path.length - `/${AGENT_CARD_WELL_KNOWN_PATH}`.length);
    res.json(this.cards.cardJson(this.cards.baseUrl(`${req.protocol}://${req.get('host') ?? 'localhost'}${prefix}`)));
  }
}
