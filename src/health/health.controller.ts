import { Controller, Get, VERSION_NEUTRAL, type OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import { HealthCheck, HealthCheckService, HealthIndicatorService, type HealthCheckResult, type HealthIndicatorFunction } from '@nestjs/terminus';
import { HEALTH_CONTRIBUTOR, type HealthContributor, type HealthProbe } from './health-contributor';

function isContributor(instance: unknown): instance is HealthContributor {
  return typeof instance === 'object' && instance !== null && typeof (instance as Partial<HealthContributor>).checkHealth === 'function';
}

/**
 * `/healthz` (readiness: 503 while any check is down, e.g. while the A2A server drains for
 * shutdown, so load balancers stop sending) and `/healthz/live` (liveness), answered by
 * @nestjs/terminus from the checks the application's modules contribute. VERSION_NEUTRAL: probes
 * are configured at a fixed path, which a host's URI versioning must not move.
 */
@Controller({ path: 'healthz', version: VERSION_NEUTRAL })
export class HealthController implements OnApplicationBootstrap {
  private liveness: HealthIndicatorFunction[] = [];
  private readiness: HealthIndicatorFunction[] = [];

  constructor(
    private readonly health: HealthCheckService,
    private readonly indicator: HealthIndicatorService,
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
  ) {}

  onApplicationBootstrap(): void {
    const process: HealthIndicatorFunction = () => this.indicator.check('process').up({ uptimeSeconds: Math.round(globalThis.process.uptime()) });
    this.liveness = [process];
    this.readiness = [process];
    for (const wrapper of this.discovery.getProviders()) {
      const probe = wrapper.metatype ? this.reflector.get<HealthProbe | undefined>(HEALTH_CONTRIBUTOR, wrapper.metatype) : undefined;
      const instance: unknown = wrapper.instance;
      if (!probe || !isContributor(instance)) continue;
      const check: HealthIndicatorFunction = async () => instance.checkHealth(this.indicator);
      this.readiness.push(check);
      if (probe === 'liveness') this.liveness.push(check);
    }
  }

  /** Readiness: every contributed check. */
  @Get()
  @HealthCheck()
  ready(): Promise<HealthCheckResult> {
    return this.health.check(this.readiness);
  }

  /** Liveness: the checks that say the process works at all. */
  @Get('live')
  @HealthCheck()
  live(): Promise<HealthCheckResult> {
    return this.health.check(this.liveness);
  }
}
