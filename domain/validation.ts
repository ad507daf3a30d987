// The one way to validate input at the edge: a zod schema per body/query/params, failing with a 400
// whose message names the field.
import type { z } from 'zod';
import { BadRequestError } from './errors.ts';

export function parseInput<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.join('.');
  throw new BadRequestError(field ? `${field}: ${issue.message}` : issue.message);
}
