import type { components } from '../../../../src/cli/api-types.js';
import { diffLeaves, showValue } from '../../api/json-diff.js';
import { TableScroll } from '../../components/table-scroll.js';

export type Revision = components['schemas']['Revision'];

/** The part of a revision compared: what a change can move (secrets are already left out). */
function compared(revision: Revision) {
  return {
    configs: revision.configs,
    labels: revision.labels,
    dependencies: revision.dependencies,
  };
}

/** The leaves that differ between two revisions, by JSON pointer: removed, added, changed. */
export function RevisionDiff({ from, to }: { from: Revision; to: Revision }) {
  const changes = diffLeaves(compared(from), compared(to));
  const title = `Changes from version ${from.version} to version ${to.version}`;
  if (changes.length === 0) return <p>No differences between these two revisions.</p>;
  return (
    <TableScroll label={title}>
      <table class="diff">
        <caption>{title}</caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Change</th>
            <th scope="col">Version {from.version}</th>
            <th scope="col">Version {to.version}</th>
          </tr>
        </thead>
        <tbody>
          {changes.map((change) => (
            <tr key={change.path} class={`diff-${change.kind}`}>
              <th scope="row">
                <code>{change.path}</code>
              </th>
              <td>{change.kind}</td>
              <td>
                <del>{change.kind === 'added' ? '' : showValue(change.from)}</del>
              </td>
              <td>
                <ins>{change.kind === 'removed' ? '' : showValue(change.to)}</ins>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
