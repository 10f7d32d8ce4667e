import { api, type ApiError, asApiError } from './client.js';
import type { Resource } from './resource-types.js';

/** The graph and the dependents list read at most this many resources of a project. */
export const PROJECT_LIMIT = 2000;
const PAGE_SIZE = 500;

export interface ProjectResources {
  resources: Resource[];
  /** More than PROJECT_LIMIT: the rest was not read. */
  truncated: boolean;
}

/**
 * Every resource of a project, page by page (the API has no dependents query:
 * dependents are the resources whose spec.dependencies name the URN), up to
 * PROJECT_LIMIT so a huge project does not load whole into the tab.
 */
export async function listProjectResources(
  project: string,
  signal: AbortSignal,
): Promise<{ data?: ProjectResources; error?: ApiError }> {
  const resources: Resource[] = [];
  let token: string | undefined;
  do {
    const { data, error, response } = await api.GET('/api/v1beta1/resources', {
      params: {
        query: { project, page_size: PAGE_SIZE, ...(token ? { page_token: token } : {}) },
      },
      signal,
    });
    if (!data) return { error: asApiError(error, response) };
    resources.push(...data.resources);
    token = data.next_page_token ?? undefined;
  } while (token && resources.length < PROJECT_LIMIT);
  return { data: { resources, truncated: token !== undefined } };
}

/** The URNs `resource` depends on, by dependency name. */
export function dependencyUrns(resource: Resource): string[] {
  return Object.values(resource.spec.dependencies as Record<string, string>);
}
