import { Module } from '@nestjs/common';
import { A2aModule } from './a2a';
import { ExtensionsModule } from './extensions';
import { HealthModule } from './health/health.module';
import { RuntimeModule } from './runtime';
import { WebModule } from './web';

/** The demo application: every toolstream module on its offline defaults. */
@Module({
  imports: [
    ExtensionsModule,
    RuntimeModule.forRoot({}),
    A2aModule.forRoot({
      // Behind a proxy, the URL clients reach (otherwise the card follows each request's Host).
      publicUrl: process.env.A2A_PUBLIC_URL || undefined,
      card: {
        name: 'toolstream demo agent',
        description:
          'An offline LangGraph agent with demo tools (weather, world clock, calculator, docs) that streams a live per-tool timeline (tool-call-v1) beside plain-text narration.',
        skills: [
          {
            id: 'weather-and-time',
            name: 'Weather and time',
            description: 'Current weather of about twenty cities and the time anywhere, in parallel.',
            tags: ['weather', 'time'],
            examples: ['weather in Paris and the time in Tokyo'],
          },
          {
            id: 'calculator',
            name: 'Calculator',
            description: 'Arithmetic expressions with parentheses and functions.',
            tags: ['math'],
            examples: ["what's 12*7"],
          },
          {
            id: 'docs',
            name: 'Docs',
            description: 'Searches and reads the bundled documentation.',
            tags: ['search', 'docs'],
            examples: ['search the docs for replay', 'read the doc missing-page'],
          },
        ],
      },
    }),
    HealthModule,
    WebModule.forRoot({}),
  ],
})
export class AppModule {}
