import { showValue } from '../../api/json-diff.js';
import type { Resource } from '../../api/resource-types.js';
import { ago, when } from '../../format.js';

/** What the last refresh or drift re-sync found (`state.drift`): the configs that differ, or the object gone. */
export function DriftSection({ resource }: { resource: Resource }) {
  const drift = resource.state.drift;
  if (!drift) return null;
  const fields = Object.entries(drift.fields);
  return (
    <>
      <h3>Drift</h3>
      <p>
        Checked{' '}
        <time dateTime={drift.checked_at} title={when(drift.checked_at)}>
          {ago(drift.checked_at)}
        </time>
        {!drift.exists ? (
          <strong class="badge badge-drift">the backend object is gone</strong>
        ) : fields.length === 0 ? (
          ': no drift.'
        ) : (
          <span class="badge badge-drift">drifted</span>
        )}
      </p>
      {drift.error ? <p class="last-error">The last check failed: {drift.error}</p> : null}
      {fields.length > 0 ? (
        <table>
          <caption class="visually-hidden">Drifted configs</caption>
          <thead>
            <tr>
              <th scope="col">Config</th>
              <th scope="col">Desired</th>
              <th scope="col">Actual</th>
            </tr>
          </thead>
          <tbody>
            {fields.map(([path, field]) => (
              <tr key={path}>
                <th scope="row">
                  <code>{path}</code>
                </th>
                <td>
                  {field.secret ? 'a secret (not shown)' : <code>{showValue(field.desired)}</code>}
                </td>
                <td>{field.secret ? 'differs' : <code>{showValue(field.actual)}</code>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}
