import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { MetricsSettings } from './interfaces/metrics-module-options.interface';
import { METRICS_SETTINGS } from './metrics.constants';
import { MetricsEndpoint } from './metrics-endpoint';

/** The metrics path on a port of its own (option `port`), closed with the application. */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MetricsServer.name);
  private server?: Server;

  constructor(
    private readonly endpoint: MetricsEndpoint,
    @Inject(METRICS_SETTINGS) private readonly settings: MetricsSettings,
  ) {}

  /** The port it listens on (useful with `port: 0`); undefined when it does not run. */
  get port(): number | undefined {
    const address = this.server?.address();
    return typeof address === 'object' && address !== null ? (address as AddressInfo).port : undefined;
  }

  async onApplicationBootstrap(): Promise<void> {
    const { path, port, host } = this.settings;
    if (path === false || port === undefined) return;
    const server = createServer((req, res) => {
      const pathname = (req.url ?? '/').split('?')[0];
      if (pathname !== path) {
        res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`Not Found: metrics are at ${path}\n`);
        return;
      }
      this.endpoint.serve(req, res).catch((err: unknown) => {
        this.logger.error(`serving metrics failed: ${err instanceof Error ? err.message : String(err)}`);
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.logger.log(`metrics on port ${this.port}${path}`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
