import { Module } from '@nestjs/common';
import { A2aModule, ExecutorModule, RuntimeModule } from 'toolstream';
import { stockPrice } from './stock-price.tool';

@Module({
  imports: [
    // The agent: your tools, and a model (OpenAI-compatible when OPENAI_API_KEY or
    // OPENAI_BASE_URL is set, else the offline model that calls tools by name).
    RuntimeModule.forRoot({ executor: ExecutorModule.forRoot({ tools: [stockPrice], toolTimeoutMs: 10_000 }) }),
    // The A2A server, under /agent: card, JSON-RPC and HTTP+JSON, streamed tool timelines.
    A2aModule.forRoot({
      path: 'agent',
      card: {
        name: 'Stock desk',
        description: 'Looks up stock prices.',
        skills: [{ id: 'prices', name: 'Prices', description: 'Latest stock prices', examples: ['stock_price ticker=ACME'] }],
      },
    }),
  ],
})
export class AppModule {}
