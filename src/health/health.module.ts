import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller';

/**
 * Health probes through @nestjs/terminus: `/healthz` (readiness) and `/healthz/live`
 * (liveness), made of the checks other modules contribute (`@ContributesHealth`); the A2A
 * server contributes `a2a`, down while it drains.
 */
@Module({
  // Probes run every few seconds; a failing one is an answer (503 with details), not a log line.
  imports: [TerminusModule.forRoot({ logger: false }), DiscoveryModule],
  controllers: [HealthController],
})
export class HealthModule {}
