import { Injectable, createParamDecorator, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { A2A_VERSION_HEADER } from './a2a.constants';
import type { A2aCallContext } from './a2a-call-context';
import { versionNotSupported } from './a2a-errors';
import { A2aService } from './a2a.service';

const CALL_CONTEXT = Symbol('A2A_CALL_CONTEXT');
type NegotiatedRequest = Request & { [CALL_CONTEXT]?: A2aCallContext };

/**
 * Negotiates an HTTP+JSON request before its body is validated: version (this binding speaks
 * A2A 1.0 only, and a request without A2A-Version is 0.3 by the spec) and extensions.
 */
@Injectable()
export class RestNegotiationGuard implements CanActivate {
  constructor(private readonly a2a: A2aService) {}

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<NegotiatedRequest>();
    const ctx = this.a2a.negotiate(req);
    if (ctx.version !== '1.0') {
      throw versionNotSupported(req.get(A2A_VERSION_HEADER) ?? '0.3', 'the HTTP+JSON binding speaks A2A 1.0; send the header A2A-Version: 1.0');
    }
    req[CALL_CONTEXT] = ctx;
    return true;
  }
}

/** The context RestNegotiationGuard negotiated for this request. */
export const CallContext = createParamDecorator((_: unknown, execution: ExecutionContext): A2aCallContext => {
  const ctx = execution.switchToHttp().getRequest<NegotiatedRequest>()[CALL_CONTEXT];
  if (!ctx) throw new Error('CallContext used on a route without RestNegotiationGuard');
  return ctx;
});

/** A task request from the URL: the path's task id over the query parameters (validated by the pipe). */
export const TaskRequestParams = createParamDecorator((_: unknown, execution: ExecutionContext): Record<string, unknown> => {
  const req = execution.switchToHttp().getRequest<Request>();
  return { ...(req.query as Record<string, unknown>), id: req.params.id };
});
