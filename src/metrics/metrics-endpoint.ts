import type { IncomingMessage, ServerResponse } from 'node:http';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { A2aAuthService } from '../a2a';
import type { MetricsSettings } from './interfaces/metrics-module-options.interface';
import { METRICS_SETTINGS } from './metrics.constants';
import { ToolstreamMetrics } from './toolstream-metrics.service';

/** What A2aAuthService throws for missing or wrong credentials. */
interface AuthFailure {
  httpStatus: number;
  message: string;
  headers?: Record<string, string>;
}

function isAuthFailure(err: unknown): err is AuthFailure {
  return err instanceof Error && typeof (err as Partial<AuthFailure>).httpStatus === 'number';
}

/**
 * Answers a scrape, on the application's listener (through MetricsMiddleware) or on the
 * module's own port: the Prometheus text, behind the A2A routes' credentials when A2A auth is on.
 */
@Injectable()
export class MetricsEndpoint {
  private readonly logger = new Logger(MetricsEndpoint.name);
  private auth?: A2aAuthService | null;

  constructor(
    private readonly metrics: ToolstreamMetrics,
    private readonly moduleRef: ModuleRef,
    @Inject(METRICS_SETTINGS) private readonly settings: MetricsSettings,
  ) {}

  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      this.send(res, 405, 'text/plain; charset=utf-8', 'Method Not Allowed: scrape with GET\n', { Allow: 'GET, HEAD' });
      return;
    }
    if (this.settings.auth) {
      try {
        this.authService()?.authenticate(req.headers);
      } catch (err) {
        if (!isAuthFailure(err)) throw err;
        this.send(res, err.httpStatus, 'text/plain; charset=utf-8', `${err.message}\n`, err.headers ?? {});
        return;
      }
    }
    try {
      const { contentType, body } = await this.metrics.exposition();
      this.send(res, 200, contentType, req.method === 'HEAD' ? '' : body);
    } catch (err) {
      this.logger.error(`collecting metrics failed: ${err instanceof Error ? err.message : String(err)}`);
      this.send(res, 500, 'text/plain; charset=utf-8', 'collecting metrics failed\n');
    }
  }

  private send(res: ServerResponse, status: number, contentType: string, body: string, headers: Record<string, string> = {}): void {
    res.writeHead(status, { ...headers, 'Content-Type': contentType, 'Cache-Control': 'no-store' });
    res.end(body);
  }

  /** A2A auth, when this application has the A2A server (an app without it has no credentials to ask). */
  private authService(): A2aAuthService | undefined {
    if (this.auth === undefined) {
      try {
        this.auth = this.moduleRef.get(A2aAuthService, { strict: false });
      } catch {
        this.auth = null;
      }
    }
    return this.auth ?? undefined;
  }
}
