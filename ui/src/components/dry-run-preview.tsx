/** A dry run's answer (docs/api.md#dry-runs): the action, the fields that would change, the steps left for sync. */
export interface DryRunAnswer {
  dry_run: true;
  action?: string;
  changes?: Array<{ path: string; from?: unknown; to?: unknown; changed?: true }>;
  steps?: string[];
}

/** What a write would do, before it is sent for real (as `terraform plan` shows it). */
export function DryRunPreview({ answer }: { answer: DryRunAnswer }) {
  const changes = answer.changes ?? [];
  return (
    <section class="dry-run" aria-labelledby="dry-run-title" role="status">
      <h2 id="dry-run-title">Preview: {answer.action ?? 'the request'} (nothing was stored)</h2>
      {changes.length === 0 ? (
        <p>No field would change.</p>
      ) : (
        <table>
          <caption class="visually-hidden">Changes</caption>
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">Now</th>
              <th scope="col">After</th>
            </tr>
          </thead>
          <tbody>
            {changes.map((change) => (
              <tr key={change.path}>
                <th scope="row">
                  <code>{change.path}</code>
                </th>
                <td>{change.changed ? '(secret)' : shown(change.from)}</td>
                <td>{change.changed ? '(secret, changed)' : shown(change.to)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {answer.steps?.length ? (
        <>
          <h3>Steps</h3>
          <ol>
            {answer.steps.map((step, index) => (
              <li key={index}>{step}</li>
            ))}
          </ol>
        </>
      ) : null}
    </section>
  );
}

function shown(value: unknown): string {
  return value === undefined ? '—' : JSON.stringify(value);
}
