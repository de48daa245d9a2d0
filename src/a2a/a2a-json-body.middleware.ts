import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import { json, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { A2A_CONFIG, A2A_JSON_CONTENT_TYPE } from './a2a.constants';
import type { A2aConfig } from './a2a.module-definition';
import { bodyReadError } from './body-parse.filter';
import { bodyTooDeep, bodyTooLarge } from './a2a-errors';
import { nestsDeeperThan } from './limits/json-depth';

const LIMIT_OPTION = 'maxBodyBytes';

/**
 * Reads the A2A routes' JSON bodies with Express's own parser (charsets, gzip/deflate/br,
 * size limits counted after inflation): `application/a2a+json` (A2A 1.0's HTTP+JSON type, which
 * an application's JSON parser leaves alone) and `application/json` when the application has
 * no JSON parser. A body whose declared length is past `maxBodyBytes` is refused even when the
 * application's parser has read it, and so is one nesting deeper than `maxJsonDepth`, whoever
 * parsed it. Errors become the binding's error through BodyParseFilter.
 */
@Injectable()
export class A2aJsonBodyMiddleware implements NestMiddleware {
  private readonly parse: RequestHandler;
  private readonly limit: number;
  private readonly maxDepth: number;

  constructor(@Inject(A2A_CONFIG) config: A2aConfig) {
    this.limit = config.maxBodyBytes;
    this.maxDepth = config.maxJsonDepth;
    // Not strict: a JSON scalar is valid JSON, answered as a request that is not an object (-32600).
    this.parse = json({ limit: this.limit, strict: false, type: ['application/json', A2A_JSON_CONTENT_TYPE] });
  }

  use(req: Request, res: Response, next: NextFunction): void {
    if (Number(req.get('content-length')) > this.limit) return next(bodyTooLarge(this.limit, LIMIT_OPTION));
    // Express's parser skips a body that is already read, and types it does not take.
    void this.parse(req, res, (err?: unknown) => {
      if (err !== undefined) return next(bodyReadError(err, LIMIT_OPTION));
      next(nestsDeeperThan(req.body, this.maxDepth) ? bodyTooDeep(this.maxDepth) : undefined);
    });
  }
}
