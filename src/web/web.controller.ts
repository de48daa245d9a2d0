import { Controller, Get, NotFoundException, Param, Req, Res, ServiceUnavailableException, VERSION_NEUTRAL } from '@nestjs/common';
import type { Request, Response } from 'express';
import { WEB_CONTENT_SECURITY_POLICY } from './web.constants';
import { WebService } from './web.service';

/**
 * The live tool-timeline page at `/` and its assets under `/assets/` (under the module's `path`, if
 * any). VERSION_NEUTRAL, as the agent card it reads beside itself: a host's URI versioning would
 * otherwise move the page to /v1/ and its relative card URL with it, where no card is.
 */
@Controller({ version: VERSION_NEUTRAL })
export class WebController {
  constructor(private readonly web: WebService) {}

  @Get()
  page(@Req() req: Request, @Res() res: Response): void {
    // The page's URLs are relative (assets, the agent card): they resolve under its prefix only
    // when the page's own URL ends in "/", so `/agent` is sent to `/agent/`.
    const [path, query] = req.originalUrl.split(/\?(.*)/s);
    if (!path.endsWith('/')) return res.redirect(301, `${path}/${query ? `?${query}` : ''}`);
    const missing = this.web.missing();
    if (missing.length > 0) {
      throw new ServiceUnavailableException(`the web page is not built (${missing.join(', ')} missing): run npm run build`);
    }
    this.send(res, 'index.html');
  }

  @Get('assets/:name')
  asset(@Param('name') name: string, @Res() res: Response): void {
    if (name === 'index.html') throw new NotFoundException(`no asset ${JSON.stringify(name)}`);
    this.send(res, name);
  }

  /** Express's send() adds the ETag and answers a matching If-None-Match with 304. */
  private send(res: Response, name: string): void {
    const asset = this.web.asset(name);
    if (!asset) throw new NotFoundException(`no asset ${JSON.stringify(name.slice(0, 80))}`);
    res.setHeader('Content-Type', asset.contentType);
    // Revalidate every time, so a rebuilt page is never stale.
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    if (name === 'index.html') res.setHeader('Content-Security-Policy', WEB_CONTENT_SECURITY_POLICY);
    res.send(asset.body);
  }
}
