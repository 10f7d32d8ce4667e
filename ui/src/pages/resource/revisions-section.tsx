import { useEffect, useState } from 'preact/hooks';

import { api } from '../../api/client.js';
import { useLoaded } from '../../api/use-loaded.js';
import { ErrorBanner } from '../../components/error-banner.js';
import { TableScroll } from '../../components/table-scroll.js';
import { ago, when } from '../../format.js';
import { type Revision, RevisionDiff } from './revision-diff.js';

/** Revisions kept per resource by default (STEWARD_REVISION_RETENTION): one page holds them. */
const REVISIONS_READ = 100;

/** The resource's history, newest first, and a diff between any two revisions the user picks. */
export function RevisionsSection({ urn, changes }: { urn: string; changes: number }) {
  const { data, error } = useLoaded(
    (signal) =>
      api.GET('/api/v1beta1/resources/{urn}/revisions', {
        params: { path: { urn }, query: { page_size: REVISIONS_READ } },
        signal,
      }),
    [urn, changes],
  );
  const revisions = data?.revisions;
  return (
    <section aria-labelledby="revisions-title" class="panel">
      <h2 id="revisions-title">Revisions</h2>
      <ErrorBanner error={error} title="The revisions could not be read" />
      {revisions === undefined ? (
        <p class="loading">Loading…</p>
      ) : revisions.length === 0 ? (
        <p>No revisions.</p>
      ) : (
        <>
          <RevisionTable revisions={revisions} />
          {revisions.length > 1 ? <Compare revisions={revisions} /> : null}
        </>
      )}
    </section>
  );
}

function RevisionTable({ revisions }: { revisions: readonly Revision[] }) {
  return (
    <TableScroll label="Revisions, newest first">
      <table>
        <caption class="visually-hidden">Revisions, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Version</th>
            <th scope="col">Action</th>
            <th scope="col">Changed</th>
            <th scope="col">By</th>
            <th scope="col">When</th>
          </tr>
        </thead>
        <tbody>
          {revisions.map((revision) => (
            <tr key={revision.id}>
              <th scope="row">{revision.version}</th>
              <td>{revision.action}</td>
              <td>
                {revision.changes.map((change) => (
                  <code key={change.path} class="path">
                    {change.path}
                  </code>
                ))}
              </td>
              <td>{revision.created_by}</td>
              <td>
                <time dateTime={revision.created_at} title={when(revision.created_at)}>
                  {ago(revision.created_at)}
                </time>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

/** Two pickers (by revision id: a URN created again restarts its versions) and the diff between them. */
function Compare({ revisions }: { revisions: readonly Revision[] }) {
  const [fromId, setFromId] = useState(revisions[1]!.id);
  const [toId, setToId] = useState(revisions[0]!.id);
  // A new revision arrived: keep the user's pick while it is still listed.
  useEffect(() => {
    if (!revisions.some((r) => r.id === fromId)) setFromId(revisions[1]!.id);
    if (!revisions.some((r) => r.id === toId)) setToId(revisions[0]!.id);
  }, [revisions]);
  const from = revisions.find((r) => r.id === fromId);
  const to = revisions.find((r) => r.id === toId);
  const picker = (id: string, label: string, value: number, set: (id: number) => void) => (
    <div>
      <label for={id}>{label}</label>
      <select
        id={id}
        value={String(value)}
        onChange={(event) => set(Number((event.currentTarget as HTMLSelectElement).value))}
      >
        {revisions.map((revision) => (
          <option key={revision.id} value={String(revision.id)}>
            version {revision.version} ({revision.action}, {when(revision.created_at)})
          </option>
        ))}
      </select>
    </div>
  );
  return (
    <div class="compare">
      <h3>Compare two revisions</h3>
      <div class="filters">
        {picker('diff-from', 'From revision', fromId, setFromId)}
        {picker('diff-to', 'To revision', toId, setToId)}
      </div>
      {from && to ? <RevisionDiff from={from} to={to} /> : null}
    </div>
  );
}
