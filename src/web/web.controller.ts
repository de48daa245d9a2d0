import { Controller, Get, NotFoundException, Param, Res, ServiceUnavailableException } from '@nestjs/common';
import type { Response } from 'express';
import { WEB_CONTENT_SECURITY_POLICY } from './web.constants';
import { WebService } from './web.service';

/** The live tool-timeline page at `/` and its assets under `/assets/`. */
@Controller()
export class WebController {
  constructor(private readonly web: WebService) {}

  @Get()
  page(@Res() res: Response): void {
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
