import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule);
  // On SIGTERM / SIGINT, A2aModule drains running tasks before the server closes.
  app.enableShutdownHooks();
  const port = Number(process.env.PORT ?? 3000);
  await app.listen(port);
  console.log(`host app listening on http://localhost:${port}/agent/.well-known/agent-card.json`);
}

void bootstrap();
