import type { Resource as ResourceDocument } from '../api/resource-types.js';
import type { Whoami } from '../session.js';

/**
 * The resource's buttons and forms (update, actions, retry, cancel, delete,
 * pause/resume, refresh, schedules). A stub: the forms' change (issue 17) replaces
 * this file; the resource page renders it at the top and re-reads on onChanged.
 */
export interface ResourceActionsProps {
  resource: ResourceDocument;
  whoami: Whoami;
  onChanged(): void;
}

export function ResourceActions(_props: ResourceActionsProps) {
  return null;
}
