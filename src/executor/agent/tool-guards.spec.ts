import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { withKnownArguments } from './tool-guards';

const echo = (schema: z.ZodObject) => withKnownArguments(tool(async (args: Record<string, unknown>) => JSON.stringify(args), { name: 'echo', description: 'echoes', schema }));

describe('withKnownArguments', () => {
  it('refuses an argument a plain object schema does not declare, naming it and the ones the tool takes', async () => {
    await expect(echo(z.object({ note: z.string() })).invoke({ note: 'x', nte: 'y' })).rejects.toThrow('unknown argument "nte" (echo takes note)');
    await expect(echo(z.strictObject({ note: z.string() })).invoke({ note: 'x', extra: 1 })).rejects.toThrow('unknown argument "extra"');
  });

  it('passes every argument to a schema that keeps unknown keys (passthrough, looseObject, catchall)', async () => {
    for (const schema of [z.object({ note: z.string() }).passthrough(), z.looseObject({ note: z.string() }), z.object({ note: z.string() }).catchall(z.unknown())]) {
      expect(JSON.parse((await echo(schema).invoke({ note: 'x', extra: 1 })) as string)).toEqual({ note: 'x', extra: 1 });
    }
  });
});
