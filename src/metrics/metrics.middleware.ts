import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable, type NestMiddleware } from '@nestjs/common';
import { MetricsEndpoint } from './metrics-endpoint';

/** Serves the metrics path on the application's listener (bound by MetricsModule to that path only). */
@Injectable()
export class MetricsMiddleware implements NestMiddleware {
  constructor(private readonly endpoint: MetricsEndpoint) {}

  use(req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void): void {
    this.endpoint.serve(req, res).catch(next);
  }
}
