import { Inject, Injectable, Logger, Optional, type OnModuleInit } from '@nestjs/common';
import { nonEmptyString } from '../common/module-options';
import { requireForRoot } from '../common/require-for-root';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WEB_ASSETS } from './web.constants';
import { WEB_MODULE_OPTIONS, type WebModuleOptions } from './web.module-definition';

export interface WebAsset {
  body: Buffer;
  contentType: string;
}

/** Reads the built page once at boot and keeps it in memory. */
@Injectable()
export class WebService implements OnModuleInit {
  private readonly logger = new Logger(WebService.name);
  private readonly assets = new Map<string, WebAsset>();
  readonly publicDir: string;

  constructor(@Optional() @Inject(WEB_MODULE_OPTIONS) given?: WebModuleOptions) {
    const options = requireForRoot('WebModule', given);
    this.publicDir = nonEmptyString('WebModule', 'publicDir', options.publicDir) ?? join(__dirname, 'public');
  }

  async onModuleInit(): Promise<void> {
    const missing: string[] = [];
    for (const [name, contentType] of Object.entries(WEB_ASSETS)) {
      try {
        this.assets.set(name, { body: await readFile(join(this.publicDir, name)), contentType });
      } catch {
        if (name !== 'app.js.map') missing.push(name);
      }
    }
    if (missing.length > 0) {
      this.logger.warn(`the web page is not built (${missing.join(', ')} missing in ${this.publicDir}): run npm run build`);
    }
  }

  /** The asset, or undefined when the name is not one of the page's files or was not built. */
  asset(name: string): WebAsset | undefined {
    return this.assets.get(name);
  }

  /** Which of the page's own files are missing (empty when it is complete). */
  missing(): string[] {
    return Object.keys(WEB_ASSETS).filter((name) => name !== 'app.js.map' && !this.assets.has(name));
  }
}
