import { IncomingMessage, ServerResponse, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Catch, Controller, Get, HttpException, Injectable, Module, Req, Res, UseFilters, UseGuards, type ArgumentsHost, type CanActivate, type ExceptionFilter, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Request, Response } from 'express';
import { PrototypedExpressAdapter } from './prototyped-express.adapter';

@Injectable()
class HeaderGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return context.switchToHttp().getRequest<Request>().get('x-let-in') === 'yes';
  }
}

@Catch(HttpException)
class TeapotFilter implements ExceptionFilter {
  catch(exception: HttpException, host: ArgumentsHost): void {
    host.switchToHttp().getResponse<Response>().status(418).json({ filtered: exception.getStatus() });
  }
}

let hangingArrived: () => void = () => undefined;

@Controller()
@UseGuards(HeaderGuard)
@UseFilters(TeapotFilter)
class ProbeController {
  @Get('probe')
  probe(@Req() req: Request, @Res() res: Response): void {
    res.status(201).json({
      expressRequest: Object.getPrototypeOf(req) === (req.app as unknown as { request: object }).request,
      expressResponse: Object.getPrototypeOf(res) === (req.app as unknown as { response: object }).response,
      nodeClasses: req instanceof IncomingMessage && res instanceof ServerResponse,
      query: req.query,
      path: req.path,
    });
  }

  /** Never answers: the connection stays busy until the server closes it. */
  @Get('hang')
  hang(): Promise<never> {
    hangingArrived();
    return new Promise<never>(() => undefined);
  }
}

@Module({ controllers: [ProbeController], providers: [HeaderGuard] })
class ProbeModule {}

function get(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('PrototypedExpressAdapter', () => {
  let app: INestApplication;
  let port: number;
  let closed = false;

  beforeEach(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [ProbeModule] }).compile();
    app = moduleRef.createNestApplication(new PrototypedExpressAdapter(), { logger: false, forceCloseConnections: true });
    await app.listen(0, '127.0.0.1');
    port = ((app.getHttpServer() as Server).address() as AddressInfo).port;
    closed = false;
  });

  afterEach(async () => {
    if (!closed) await app.close();
  });

  it("builds requests and responses on Express's prototypes, still Node's classes, and Express works on them", async () => {
    const express = app.getHttpAdapter().getInstance() as { request: object; response: object };
    const built: boolean[] = [];
    (app.getHttpServer() as Server).prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
      // Before Express has seen them.
      built.push(Object.getPrototypeOf(req) === express.request, Object.getPrototypeOf(res) === express.response);
    });
    const answer = await get(port, '/probe?a=1&b=two', { 'x-let-in': 'yes' });
    expect(built).toEqual([true, true]);
    expect(answer).toEqual({
      status: 201,
      body: { expressRequest: true, expressResponse: true, nodeClasses: true, query: { a: '1', b: 'two' }, path: '/probe' },
    });
  });

  it("runs the route's guards and exception filters", async () => {
    expect(await get(port, '/probe')).toEqual({ status: 418, body: { filtered: 403 } });
  });

  it('closes the connections still busy on close (forceCloseConnections)', async () => {
    const arrived = new Promise<void>((resolve) => (hangingArrived = resolve));
    const failed = new Promise<Error>((resolve) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/hang', headers: { 'x-let-in': 'yes' } });
      req.on('error', resolve);
      req.end();
    });
    await arrived;
    await app.close();
    expect((await failed).message).toMatch(/socket hang up|ECONNRESET/);
    closed = true;
  });
});
