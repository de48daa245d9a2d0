import type { InjectionToken, OptionalFactoryDependency } from '@nestjs/common';

/**
 * Every toolstream module with options is imported through `forRoot` / `forRootAsync`. Its
 * providers inject the options optionally and pass them through requireForRoot, so a bare
 * import fails at boot with a message that says so, not with Nest's missing-token error.
 */
export const optionalOptions = (token: InjectionToken): OptionalFactoryDependency => ({ token, optional: true });

export function requireForRoot<T>(moduleName: string, options: T | undefined): T {
  if (options === undefined) {
    throw new Error(`${moduleName} must be imported as ${moduleName}.forRoot({...}) or ${moduleName}.forRootAsync({...}), not as the bare class`);
  }
  return options;
}
