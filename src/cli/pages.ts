import { CliError, EXIT } from './cli-error.js';
import type { ApiClient } from './http-client.js';

/** The largest page the API serves. */
const MAX_PAGE_SIZE = 500;

export interface Listing<T> {
  items: T[];
  /** Where the listing goes on when --limit cut it short; null at the end. */
  next_page_token: string | null;
}

/**
 * Follows `next_page_token` until the listing ends or `limit` items are in.
 * `key` names the array in each page (`resources`, `operations`, …).
 */
export async function collectPages<T>(
  client: ApiClient,
  path: string,
  key: string,
  query: Record<string, string | undefined>,
  limit: number | undefined,
): Promise<Listing<T>> {
  const items: T[] = [];
  let token: string | undefined = query.page_token;
  for (;;) {
    const pageSize = Math.min(
      MAX_PAGE_SIZE,
      limit === undefined ? MAX_PAGE_SIZE : limit - items.length,
    );
    const page = await client.request<Record<string, unknown>>('GET', path, {
      query: { ...query, page_size: pageSize, page_token: token },
    });
    items.push(...((page[key] as T[] | undefined) ?? []));
    const next = (page.next_page_token as string | null | undefined) ?? null;
    if (next === null || (limit !== undefined && items.length >= limit))
      return { items, next_page_token: next };
    token = next;
  }
}

export function parseLimit(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1)
    throw new CliError('--limit must be a whole number of at least 1', EXIT.usage);
  return Number(raw);
}

/** Commander's collector for a repeatable option. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
