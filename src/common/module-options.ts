import type { DynamicModule, Type } from '@nestjs/common';
import { RouterModule } from '@nestjs/core';

/**
 * Checks shared by every module's options: a misconfigured value fails at boot naming the module
 * and the option, not later with a hung stream or a NaN timer.
 */

/** A count, a size in bytes or a duration in ms greater than zero; undefined stays undefined. */
export function positiveWholeNumber(moduleName: string, name: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new Error(`${moduleName} option ${name} must be a positive whole number, got ${String(value)}`);
  }
  return value;
}

/** Like positiveWholeNumber, zero allowed. */
export function wholeNumber(moduleName: string, name: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new Error(`${moduleName} option ${name} must be zero or a positive whole number, got ${String(value)}`);
  }
  return value;
}

export function booleanOption(moduleName: string, name: string, value: boolean | undefined): boolean | undefined {
  if (value !== undefined && typeof value !== 'boolean') {
    throw new Error(`${moduleName} option ${name} must be true or false, got ${JSON.stringify(value)}`);
  }
  return value;
}

export function nonEmptyString(moduleName: string, name: string, value: string | undefined): string | undefined {
  if (value !== undefined && (typeof value !== 'string' || value.trim() === '')) {
    throw new Error(`${moduleName} option ${name} must be a non-empty string, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** A route prefix: path segments of letters, digits, `-`, `_`, `.`, without empty ones. */
export function checkRoutePrefix(moduleName: string, path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  const trimmed = typeof path === 'string' ? path.replace(/^\/+|\/+$/g, '') : path;
  // No "." or ".." segment: a prefix names a place, it does not climb out of one.
  if (typeof trimmed !== 'string' || !/^[\w.-]+(?:\/[\w.-]+)*$/.test(trimmed) || trimmed.split('/').some((s) => /^\.+$/.test(s))) {
    throw new Error(`${moduleName} option path must be a route prefix like "agent" or "api/agent", got ${JSON.stringify(path)}`);
  }
  return trimmed;
}

/** The imports that mount `module`'s controllers under the `path` extra (none without one). */
export function mountedAt(moduleName: string, path: string | undefined, module: Type): DynamicModule[] {
  const prefix = checkRoutePrefix(moduleName, path);
  return prefix ? [RouterModule.register([{ path: prefix, module }])] : [];
}
