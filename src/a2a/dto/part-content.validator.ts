import { ValidateBy, type ValidationOptions } from 'class-validator';

/** How many of `fields` an object sets. */
function presentCount(item: unknown, fields: readonly string[]): number {
  if (typeof item !== 'object' || item === null) return 0;
  return fields.filter((f) => (item as Record<string, unknown>)[f] !== undefined).length;
}

/**
 * Exactly one of `fields` must be set, the way a protobuf `oneof` works (a Part's text / raw /
 * url / data; a 0.3 file's bytes / uri). On an array, every element is checked and the message
 * names the first one that fails.
 */
export function HasExactlyOneOf(fields: readonly string[], options?: ValidationOptions): PropertyDecorator {
  const ok = (item: unknown): boolean => typeof item !== 'object' || item === null || presentCount(item, fields) === 1;
  return ValidateBy(
    {
      name: 'hasExactlyOneOf',
      validator: {
        validate: (value: unknown) => (Array.isArray(value) ? value.every(ok) : ok(value)),
        defaultMessage: (args) => {
          const value: unknown = args?.value;
          const where = Array.isArray(value) ? `${args?.property}[${value.findIndex((item) => !ok(item))}]` : String(args?.property);
          const item: unknown = Array.isArray(value) ? value.find((item) => !ok(item)) : value;
          const found = presentCount(item, fields);
          return `${where} must have exactly one of ${fields.join(', ')} (it has ${found === 0 ? 'none' : found})`;
        },
      },
    },
    options,
  );
}
