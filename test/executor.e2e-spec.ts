import { Test } from '@nestjs/testing';
import type { INestApplication } from '@nestjs/common';
import { firstValueFrom, toArray } from 'rxjs';
import { AppModule } from '../src/app.module';
import { AgentExecutor, type ExecutorEvent } from '../src';
import { validateToolCallFrame } from '../src/extensions';

describe('executor in the demo app (e2e)', () => {
  let app: INestApplication;
  const saved = { ...process.env };

  beforeAll(async () => {
    // The demo app runs offline unless an OpenAI-compatible endpoint is configured.
    delete process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_BASE_URL;
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(async () => {
    process.env = { ...saved };
    await app.close();
  });

  it('answers a multi-part request through the demo tools, with a valid frame per phase', async () => {
    const executor = app.get(AgentExecutor);
    const events: ExecutorEvent[] = await firstValueFrom(
      executor.run("what's 12*7, search the docs for replay and take a slow step of 100 ms", { correlationId: 'e2e-1' }).pipe(toArray()),
    );
    expect(events[0]).toEqual({ type: 'progress', text: 'thinking', step: 0 });
    const frames = events.flatMap((e) => (e.type === 'toolFrame' ? [e.frame] : []));
    expect(frames.every((f) => validateToolCallFrame(f).ok)).toBe(true);
    expect(frames.filter((f) => f.phase === 'started').map((f) => f.name)).toEqual(['calculator', 'search_docs', 'slow_task']);
    expect(frames.filter((f) => f.phase === 'completed')).toHaveLength(3);
    // The slow step finishes last: its frame leaves after the others, not with them.
    expect(frames[frames.length - 1]).toMatchObject({ name: 'slow_task', phase: 'completed' });
    const reply = events[events.length - 1];
    expect(reply.type).toBe('reply');
    expect(reply.type === 'reply' && reply.text).toMatch(/^12\*7 = 84\. Docs about "replay": "Replay after a reconnect" \(replay\)/);
  });
});
