import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { applyHttpTimeouts, ExpressPrototypesAdapter } from './a2a';
import { enableGracefulShutdown } from './demo/graceful-shutdown';
import { portFromEnv, roleFromEnv } from './app.config';
import { AppModule, DemoRoleModule } from './app.module';
import { startTracingFromEnv } from './otel-sdk';

async function bootstrap(): Promise<void> {
  const port = portFromEnv();
  const role = roleFromEnv();
  // Before the app is built, so every span of the app reaches it.
  const stopTracing = await startTracingFromEnv();
  // A2aModule reads the A2A routes' JSON bodies itself, within its maxBodyBytes; shutdown
  // closes the connections still open once the drain is over. Requests and responses are born
  // on Express's prototypes (ExpressPrototypesAdapter): one hidden class for all of them.
  const app = await NestFactory.create<NestExpressApplication>(role === 'all' ? AppModule : DemoRoleModule.forRole(role), new ExpressPrototypesAdapter(), {
    bodyParser: false,
    forceCloseConnections: true,
  });
  // No `X-Powered-By: Express` on every response: it names the stack to scanners, and a header
  // set before the handler's makes Node merge the SSE head header by header.
  app.disable('x-powered-by');
  // SIGTERM / SIGINT: refuse new requests, drain running tasks, close, exit 0.
  enableGracefulShutdown(app, {
    // The spans of the last tasks leave before the process does.
    exit: (code) => void (stopTracing?.() ?? Promise.resolve()).catch(() => undefined).finally(() => process.exit(code)),
  });
  // Deliberate limits on slow clients: headers within 10 s, a whole request within 30 s, idle
  // keep-alive connections closed after 5 s (see docs/reliability.md).
  applyHttpTimeouts(app.getHttpServer());
  await app.listen(port);
  Logger.log(`toolstream listening on http://localhost:${port} (role: ${role})`, 'Bootstrap');
}

bootstrap().catch((err: unknown) => {
  // A bad setting (e.g. OPENAI_BASE_URL) stops the app here, with the setting named.
  Logger.error(`toolstream did not start: ${err instanceof Error ? err.message : String(err)}`, 'Bootstrap');
  process.exit(1);
});
