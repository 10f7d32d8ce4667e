import type { ApiError } from '../api/client.js';

/** Messages by the JSON pointer (into the request body) of the field they are about. */
export type FieldErrors = ReadonlyMap<string, string[]>;

export interface PlacedErrors {
  fields: FieldErrors;
  /** What no field shows: the whole error when nothing could be placed, the unplaced problems otherwise. */
  banner: ApiError | undefined;
}

interface Problem {
  path: string;
  message: string;
}

/**
 * Splits the API's error JSON (docs/api.md#errors) between the form's fields and
 * a banner: each of `details.problems` (and a lone `details.path`) whose pointer
 * names a field the form shows goes to that field.
 */
export function placeErrors(error: ApiError | undefined, shown: ReadonlySet<string>): PlacedErrors {
  const fields = new Map<string, string[]>();
  if (!error) return { fields, banner: undefined };
  const details = (error.error.details ?? {}) as { problems?: unknown; path?: unknown };
  const problems: Problem[] = Array.isArray(details.problems)
    ? details.problems.filter(isProblem)
    : typeof details.path === 'string'
      ? [{ path: details.path, message: error.error.message }]
      : [];
  const unplaced: Problem[] = [];
  for (const problem of problems) {
    const at = nearestShown(problem.path, shown);
    if (at === undefined) unplaced.push(problem);
    else fields.set(at, [...(fields.get(at) ?? []), messageAt(problem, at)]);
  }
  if (problems.length > 0 && unplaced.length === 0) return { fields, banner: undefined };
  if (problems.length === 0) return { fields, banner: error };
  return {
    fields,
    banner: {
      error: {
        ...error.error,
        message: unplaced.map((p) => `${p.path} ${p.message}`).join('; '),
        details: { problems: unplaced },
      },
    },
  };
}

/** The field of the pointer, or of its nearest parent that has one (`/labels/Bad Key` is shown at Labels). */
function nearestShown(pointer: string, shown: ReadonlySet<string>): string | undefined {
  for (let at = pointer; at; at = at.slice(0, at.lastIndexOf('/'))) if (shown.has(at)) return at;
  return undefined;
}

/** A problem shown at a parent's field names the part it is about. */
function messageAt(problem: Problem, at: string): string {
  return problem.path === at
    ? problem.message
    : `${problem.path.slice(at.length + 1)}: ${problem.message}`;
}

function isProblem(value: unknown): value is Problem {
  const problem = value as Problem | null;
  return typeof problem?.path === 'string' && typeof problem.message === 'string';
}
