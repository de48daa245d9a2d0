import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { applyHttpTimeouts, enableGracefulShutdown } from './a2a';
import { AppModule } from './app.module';

async function bootstrap(): Promise<void> {
  // A2aModule reads the A2A routes' JSON bodies itself, within its maxBodyBytes; shutdown
  // closes the connections still open once the drain is over.
  const app = await NestFactory.create(AppModule, { bodyParser: false, forceCloseConnections: true });
  // SIGTERM / SIGINT: refuse new requests, drain running tasks, close, exit 0.
  enableGracefulShutdown(app);
  // Deliberate limits on slow clients: headers within 10 s, a whole request within 30 s, idle
  // keep-alive connections closed after 5 s (see docs/reliability.md).
  applyHttpTimeouts(app.getHttpServer());
  const port = Number(process.env.PORT ?? 3000);
  await app.listen(port);
  Logger.log(`toolstream listening on http://localhost:${port}`, 'Bootstrap');
}

void bootstrap();
