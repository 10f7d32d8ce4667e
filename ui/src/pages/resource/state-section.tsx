import type { Resource } from '../../api/resource-types.js';
import { StatusBadge } from '../../components/status-badge.js';
import { when } from '../../format.js';
import { DriftSection } from './drift-section.js';
import { FieldList } from './field-list.js';
import { PendingSteps } from './pending-steps.js';

/** Where the resource is: status and action, sync attempts and times, steps left, drift, output. */
export function StateSection({ resource }: { resource: Resource }) {
  const { state } = resource;
  const { sync } = state;
  return (
    <section aria-labelledby="state-title" class="panel">
      <h2 id="state-title">State</h2>
      <dl class="fields" aria-label="State">
        <div>
          <dt>Status</dt>
          <dd>
            <StatusBadge status={state.status} action={state.action} paused={state.paused} />
          </dd>
        </div>
        <div>
          <dt>Action</dt>
          <dd>{state.action}</dd>
        </div>
        <div>
          <dt>Paused</dt>
          <dd>{state.paused ? 'yes: no sync runs, accepted requests wait' : 'no'}</dd>
        </div>
        <div>
          <dt>Sync attempts</dt>
          <dd>{sync.attempts === 0 ? 'none failed' : `${sync.attempts} failed in a row`}</dd>
        </div>
        <div>
          <dt>Last error</dt>
          <dd class={sync.last_error ? 'last-error' : undefined}>{sync.last_error ?? 'none'}</dd>
        </div>
        <Time label="Next sync" iso={sync.next_sync_at} none="nothing due" />
        <Time label="Last synced" iso={sync.last_synced_at} none="never" />
        {sync.deadline_at ? <Time label="Deadline" iso={sync.deadline_at} none="" /> : null}
        {sync.waiting_on?.length ? (
          <div>
            <dt>Waiting on</dt>
            <dd>{sync.waiting_on.join(', ')}</dd>
          </div>
        ) : null}
        <div>
          <dt>Observed version</dt>
          <dd>
            {state.observed_version ?? 'none yet'} of {resource.version}
          </dd>
        </div>
        <div>
          <dt>Operation</dt>
          <dd>
            <code>{state.operation_id}</code>
          </dd>
        </div>
      </dl>
      <PendingSteps resource={resource} />
      <DriftSection resource={resource} />
      <h3>Output</h3>
      <FieldList
        fields={state.output as Record<string, unknown>}
        label="Output"
        empty="No output yet."
      />
      <p class="hint">
        Secret outputs are left out: an admin reads them with the API (GET …/secrets), never on this
        page.
      </p>
    </section>
  );
}

function Time({ label, iso, none }: { label: string; iso: string | null; none: string }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>{iso ? <time dateTime={iso}>{when(iso)}</time> : none}</dd>
    </div>
  );
}
