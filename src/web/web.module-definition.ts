import { ConfigurableModuleBuilder } from '@nestjs/common';

export interface WebModuleOptions {
  /**
   * The directory holding the built page: index.html, app.css, app.js (see web-bundle.ts).
   * Default: `public` beside the compiled module, where `npm run build` writes it.
   */
  publicDir?: string;
}

export const { ConfigurableModuleClass, MODULE_OPTIONS_TOKEN: WEB_MODULE_OPTIONS, OPTIONS_TYPE, ASYNC_OPTIONS_TYPE } =
  new ConfigurableModuleBuilder<WebModuleOptions>().setClassMethodName('forRoot').build();
