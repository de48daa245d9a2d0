/** The public API for backends that import toolstream's modules. */
export * from './extensions';
export * from './executor';
export * from './runtime';
export { HealthModule } from './health/health.module';
export * from './client';
export * from './web';
