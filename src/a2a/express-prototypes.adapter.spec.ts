import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Controller, Get, Module, Req, Res } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Request } from 'express';
import { ExpressPrototypesAdapter } from './express-prototypes.adapter';

@Controller()
class EchoController {
  @Get('echo')
  echo(@Req() req: Request): { path: string; header?: string } {
    return { path: req.path, header: req.get('x-echo') };
  }

  /** Answers the head, never the end. */
  @Get('open')
  open(@Res() res: http.ServerResponse): void {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.write('open');
  }
}

@Module({ controllers: [EchoController] })
class EchoModule {}

async function start(options: { forceCloseConnections?: boolean } = {}): Promise<{ app: NestExpressApplication; port: number }> {
  const app = await NestFactory.create<NestExpressApplication>(EchoModule, new ExpressPrototypesAdapter(), { logger: false, ...options });
  await app.listen(0, '127.0.0.1');
  return { app, port: (app.getHttpServer().address() as AddressInfo).port };
}

function get(port: number): Promise<{ status?: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/echo', headers: { 'x-echo': 'hi' } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode, body }));
      })
      .on('error', reject);
  });
}

describe('ExpressPrototypesAdapter', () => {
  it('builds every request and response on the application’s Express prototypes, before Express sees them', async () => {
    const { app, port } = await start();
    try {
      const express = app.getHttpAdapter().getInstance() as { request: object; response: object };
      const seen: boolean[] = [];
      // Ahead of Express's own listener: the objects as the server made them.
      app.getHttpServer().prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
        seen.push(Object.getPrototypeOf(req) === express.request, Object.getPrototypeOf(res) === express.response);
        seen.push(req instanceof http.IncomingMessage, res instanceof http.ServerResponse);
      });
      expect(await get(port)).toEqual({ status: 200, body: JSON.stringify({ path: '/echo', header: 'hi' }) });
      expect(await get(port)).toEqual({ status: 200, body: JSON.stringify({ path: '/echo', header: 'hi' }) });
      expect(seen).toEqual(Array(8).fill(true));
    } finally {
      await app.close();
    }
  });

  it('forceCloseConnections: close() ends the connections of responses still open', async () => {
    const { app, port } = await start({ forceCloseConnections: true });
    const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: '/open' }, resolve).on('error', reject);
    });
    expect(response.statusCode).toBe(200);
    const closed = new Promise<void>((resolve) => response.socket.once('close', () => resolve()));
    response.on('error', () => undefined);
    await app.close();
    await closed;
  });
});
