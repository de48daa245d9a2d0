import { Inject, Injectable, PayloadTooLargeException, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { A2A_CONFIG, A2A_JSON_CONTENT_TYPE } from './a2a.constants';
import type { A2aConfig } from './a2a.module-definition';
import { BodyParseError } from './body-parse.filter';

/**
 * Reads `application/a2a+json` bodies (A2A 1.0's HTTP+JSON content type), which the
 * application's JSON parser leaves alone since it only takes `application/json`. A malformed
 * body becomes the binding's parse error through BodyParseFilter.
 */
@Injectable()
export class A2aJsonBodyMiddleware implements NestMiddleware {
  constructor(@Inject(A2A_CONFIG) private readonly config: A2aConfig) {}

  async use(req: Request, _res: Response, next: NextFunction): Promise<void> {
    if (req.body !== undefined || !req.is(A2A_JSON_CONTENT_TYPE)) return next();
    const limit = this.config.maxBodyBytes;
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of req as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > limit) return next(new PayloadTooLargeException(`The request body exceeds ${limit} bytes`));
        chunks.push(chunk);
      }
    } catch (err) {
      return next(new BodyParseError(`the request body could not be read: ${err instanceof Error ? err.message : String(err)}`));
    }
    try {
      req.body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    } catch (err) {
      return next(new BodyParseError(err instanceof Error ? err.message : String(err)));
    }
    next();
  }
}
