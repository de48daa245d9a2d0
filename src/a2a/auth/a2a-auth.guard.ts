import type { IncomingHttpHeaders } from 'node:http';
import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { CallerId } from '../task-record';
import { A2aAuthService } from './a2a-auth.service';

const CALLER = Symbol('A2A_CALLER');
type AuthenticatedRequest = { headers: IncomingHttpHeaders; rawHeaders?: string[]; [CALLER]?: CallerId };

/**
 * Authenticates every request of the A2A bindings (the agent card stays public): the caller it
 * resolves owns the tasks it creates. Missing or invalid credentials: 401 in the binding's shape.
 */
@Injectable()
export class A2aAuthGuard implements CanActivate {
  constructor(private readonly auth: A2aAuthService) {}

  canActivate(context: ExecutionContext): boolean {
    this.authenticate(context.switchToHttp().getRequest<AuthenticatedRequest>());
    return true;
  }

  /** The check itself, for a handler that runs it without Nest's guard machinery (A2aJsonRpcController). */
  authenticate(req: AuthenticatedRequest): void {
    // A2aJsonBodyMiddleware authenticated this request already (before reading its body).
    authenticateOnce(this.auth, req);
  }
}

/** Authenticates a request once: the guard then reuses the caller instead of checking again. */
export function authenticateOnce(auth: A2aAuthService, req: AuthenticatedRequest): void {
  if (!(CALLER in req)) req[CALLER] = auth.authenticate(req.headers, req.rawHeaders);
}

/** The caller A2aAuthGuard resolved for this request (anonymous: `undefined`). */
export function callerOf(req: object): CallerId {
  return (req as AuthenticatedRequest)[CALLER];
}
