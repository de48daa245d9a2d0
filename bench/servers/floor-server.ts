/**
 * (d) The framework floor: the least a NestJS 11 + @nestjs/platform-express application does
 * for the empty task. One module, one controller, one route at toolstream's JSON-RPC path whose
 * handler is the limit's own (limit-server.ts: read the body, parse, write the same SSE events),
 * and the application created as toolstream's is (src/main.ts, toolstream-server.ts): no body
 * parser, no X-Powered-By, requests and responses born on Express's prototypes
 * (ExpressPrototypesAdapter). What it costs over the limit is Nest and Express per request, which
 * toolstream cannot go below while it is built on them; what toolstream costs over it is its own.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Controller, Module, Post, Req, Res } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { ExpressPrototypesAdapter } from '../../src/a2a/express-prototypes.adapter';
import { serveLimitRequest } from './limit-server';
import type { ServerUnderTest } from './server-under-test';

const FLOOR_PATH = '/a2a';

@Controller()
class FloorController {
  @Post(FLOOR_PATH)
  stream(@Req() req: IncomingMessage, @Res() res: ServerResponse): void {
    serveLimitRequest(req, res);
  }
}

@Module({ controllers: [FloorController] })
class FloorModule {}

export async function createFloorServer(): Promise<ServerUnderTest> {
  const app = await NestFactory.create<NestExpressApplication>(FloorModule, new ExpressPrototypesAdapter(), { logger: ['error'], bodyParser: false });
  app.disable('x-powered-by');
  await app.init();
  return { server: app.getHttpServer() as Server, rpcPath: FLOOR_PATH };
}
