import { ConfigurableModuleBuilder } from '@nestjs/common';
import { mountedAt } from '../common/module-options';

export interface WebModuleOptions {
  /**
   * The directory holding the built page: index.html, app.css, app.js (see web-bundle.ts).
   * Default: `public` beside the compiled module, where `npm run build` writes it.
   */
  publicDir?: string;
}

export interface WebModuleExtras {
  /**
   * Mounts the page under this prefix, e.g. `agent` → `/agent/` and `/agent/assets/…`. Give it
   * A2aModule's `path`: the page reads the agent card beside itself
   * (`<prefix>/.well-known/agent-card.json`). Default: the application's root.
   */
  path?: string;
}

export const { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN: WEB_MODULE_OPTIONS, OPTIONS_TYPE, ASYNC_OPTIONS_TYPE } =
  new ConfigurableModuleBuilder<WebModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras<WebModuleExtras>({}, (definition, extras) => ({
      ...definition,
      imports: [...(definition.imports ?? []), ...mountedAt('WebModule', extras.path, definition.module)],
    }))
    .build();
