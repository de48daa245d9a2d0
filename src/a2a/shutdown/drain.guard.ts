import { Injectable, type CanActivate } from '@nestjs/common';
import { serviceUnavailable } from '../a2a-errors';
import { A2aDrainService } from './a2a-drain.service';

/** Seconds a refused client is told to wait (Retry-After): by then another instance serves it. */
const RETRY_AFTER_SECONDS = 5;

/** Refuses every A2A request once the server drains for shutdown: 503 in the binding's shape. */
@Injectable()
export class DrainGuard implements CanActivate {
  constructor(private readonly drain: A2aDrainService) {}

  canActivate(): boolean {
    this.refuseIfDraining();
    return true;
  }

  /** The check itself, for a handler that runs it without Nest's guard machinery (A2aJsonRpcController). */
  refuseIfDraining(): void {
    if (this.drain.draining) {
      throw serviceUnavailable('The server is shutting down and takes no new requests; retry shortly', RETRY_AFTER_SECONDS);
    }
  }
}
