import type { AuditFilter, AuditTrail } from '../ports.js';
import { boundedPage, DEFAULT_MAX_PAGE_BYTES, type EncodedPage } from '../requests/bounded-page.js';
import { decodePageToken, encodePageToken } from '../requests/page-token.js';
import { inScope, type ProjectScope, projectsOf } from '../requests/scope.js';
import type { AuditRecord } from './audit-entry.js';

/**
 * GET /audit (docs/api.md#audit). The caller's scope is a filter in the query, as in
 * every list: an admin of some projects sees their entries only (entries that name no
 * project are for admins of every project), and asking for another project's is an
 * empty page. `beforeRead` writes this process's buffered entries first, so a caller
 * reads its own requests at once.
 */
export function createAuditQueries({
  store,
  beforeRead,
  maxPageBytes = DEFAULT_MAX_PAGE_BYTES,
}: {
  store: Pick<AuditTrail, 'listAudit'>;
  beforeRead?: () => Promise<void>;
  maxPageBytes?: number;
}) {
  return {
    async list(
      filter: Omit<AuditFilter, 'projects'>,
      pageSize: number,
      pageToken: string | undefined,
      scope: ProjectScope,
    ): Promise<EncodedPage<AuditRecord>> {
      const before = decodePageToken<number>('audit', pageToken, 'number');
      if (filter.project !== undefined && !inScope(scope, filter.project))
        return boundedPage([], false, maxPageBytes, () => '');
      await beforeRead?.();
      const rows = await store.listAudit(
        { ...filter, projects: projectsOf(scope) },
        pageSize + 1,
        before,
      );
      return boundedPage(rows.slice(0, pageSize), rows.length > pageSize, maxPageBytes, (last) =>
        encodePageToken('audit', last.id),
      );
    },
  };
}

export type AuditQueries = ReturnType<typeof createAuditQueries>;
