import { InvalidRequestError } from './errors.js';

/** docs/design.md §3: kind, project and name patterns; they make every URN parse. Each allows at most NAME_MAX_CHARS. */
export const KIND_PATTERN = /^[a-z][a-z0-9_]{1,62}$/;
export const NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;
export const NAME_MAX_CHARS = 63;
const URN_PREFIX = 'orn:steward:';

export interface ResourceId {
  kind: string;
  project: string;
  name: string;
}

export function formatUrn({ kind, project, name }: ResourceId): string {
  return `${URN_PREFIX}${kind}:${project}:${name}`;
}

/** Parses `orn:steward:{kind}:{project}:{name}`; anything else is a 400. */
export function parseUrn(urn: string): ResourceId & { urn: string } {
  if (typeof urn !== 'string' || !urn.startsWith(URN_PREFIX)) {
    throw new InvalidRequestError(
      `"${String(urn)}" is not a URN of the form orn:steward:{kind}:{project}:{name}`,
    );
  }
  const parts = urn.slice(URN_PREFIX.length).split(':');
  const [kind, project, name] = parts;
  if (
    parts.length !== 3 ||
    !kind ||
    !project ||
    !name ||
    !KIND_PATTERN.test(kind) ||
    !NAME_PATTERN.test(project) ||
    !NAME_PATTERN.test(name)
  ) {
    const long =
      parts.length === 3
        ? (['kind', 'project', 'name'] as const).find((_, i) => parts[i]!.length > NAME_MAX_CHARS)
        : undefined;
    const why = long ? `: its ${long} is longer than ${NAME_MAX_CHARS} characters` : '';
    throw new InvalidRequestError(
      `"${urn}" is not a URN of the form orn:steward:{kind}:{project}:{name}${why}`,
      {
        kind: KIND_PATTERN.source,
        project: NAME_PATTERN.source,
        name: NAME_PATTERN.source,
      },
    );
  }
  return { urn, kind, project, name };
}
