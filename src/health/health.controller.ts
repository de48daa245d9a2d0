import { Controller, Get, HttpStatus, Res, type OnApplicationBootstrap } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Response } from 'express';
import { A2aDrainService } from '../a2a';

type Health = { status: 'ok' } | { status: 'draining' };

@Controller()
export class HealthController implements OnApplicationBootstrap {
  private drain?: A2aDrainService;

  constructor(private readonly moduleRef: ModuleRef) {}

  /** The A2A server is optional here: an app without it is healthy once it is up. */
  onApplicationBootstrap(): void {
    try {
      this.drain = this.moduleRef.get(A2aDrainService, { strict: false });
    } catch {
      this.drain = undefined;
    }
  }

  /** 200 once the app is up; 503 while it drains for shutdown, so load balancers stop sending. */
  @Get('healthz')
  health(@Res({ passthrough: true }) res: Response): Health {
    if (this.drain?.draining) {
      res.status(HttpStatus.SERVICE_UNAVAILABLE);
      return { status: 'draining' };
    }
    return { status: 'ok' };
  }
}
