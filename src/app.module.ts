import { Module } from '@nestjs/common';
import { ExecutorModule } from './executor';
import { ExtensionsModule } from './extensions';
import { HealthModule } from './health/health.module';

/** The demo application: every toolstream module on its offline defaults. */
@Module({ imports: [ExtensionsModule, ExecutorModule, HealthModule] })
export class AppModule {}
