import { useEffect, useState } from 'preact/hooks';

import type { operations } from '../../../src/cli/api-types.js';
import type { Resource } from '../api/resource-types.js';
import { ifMatch, write } from '../api/write.js';
import { useWrite } from '../forms/use-write.js';
import { ModalDialog } from './modal-dialog.js';
import { WriteFeedback } from './write-feedback.js';

type Mode = 'delete' | 'orphan';

/** The DELETE's query flags (docs/api.md#delete): orphan keeps the backend, cascade takes the dependents too. */
type DeleteFlags = Pick<
  NonNullable<operations['deleteResource']['parameters']['query']>,
  'orphan' | 'cascade'
>;

const DELETE_PATH = '/api/v1beta1/resources/{urn}';

/** What a DELETE would remove, asked of Steward with a dry run: the URNs in deletion order, or the dependents that block it. */
interface Reach {
  urns?: string[];
  blockedBy?: string[];
  error?: string;
}

/**
 * Delete or orphan (DESIGN §11), with cascade to the dependents. Before the user
 * confirms, a dry run of the same DELETE names everything it would remove.
 */
export function DeleteDialog(props: {
  resource: Resource;
  onDone(): void;
  onReload(): void;
  onClose(): void;
}) {
  const { resource } = props;
  const allowed = resource.allowed_actions ?? [];
  const modes: Mode[] = (['delete', 'orphan'] as const).filter((mode) => allowed.includes(mode));
  const [mode, setMode] = useState<Mode>(modes[0] ?? 'delete');
  const [cascade, setCascade] = useState(false);
  const [version] = useState(resource.version);
  const [reach, setReach] = useState<Reach>();
  const w = useWrite();
  const query: DeleteFlags = {
    ...(mode === 'orphan' ? { orphan: 'true' } : {}),
    ...(cascade ? { cascade: 'true' } : {}),
  };
  const key = JSON.stringify(query);
  useEffect(() => {
    let live = true;
    setReach(undefined);
    void dryRunReach(resource.urn, query).then((found) => live && setReach(found));
    return () => void (live = false);
  }, [resource.urn, key]);

  const verb = mode === 'orphan' ? 'Orphan' : 'Delete';
  const count = reach?.urns?.length ?? 0;
  return (
    <ModalDialog title={`${verb} ${resource.name}`} onClose={props.onClose}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void w
            .send('delete', DELETE_PATH, {
              params: { path: { urn: resource.urn }, query, header: ifMatch(version) },
            })
            .then((done) => done && props.onDone());
        }}
      >
        <WriteFeedback error={w.error} status={w.status} onReload={props.onReload} />
        <fieldset class="field-group">
          <legend>What happens to the backend</legend>
          {modes.map((choice) => (
            <div class="field field-check" key={choice}>
              <input
                type="radio"
                name="delete-mode"
                id={`delete-mode-${choice}`}
                checked={mode === choice}
                onChange={() => setMode(choice)}
              />
              <label for={`delete-mode-${choice}`}>
                {choice === 'delete'
                  ? 'Delete: the module tears the backend object down'
                  : 'Orphan: forget the resource, keep the backend object as it is'}
              </label>
            </div>
          ))}
        </fieldset>
        <div class="field field-check">
          <input
            type="checkbox"
            id="delete-cascade"
            checked={cascade}
            onChange={(e) => setCascade(e.currentTarget.checked)}
          />
          <label for="delete-cascade">
            Cascade: also {mode} every resource that depends on it, first
          </label>
        </div>
        <Consequence reach={reach} verb={verb} />
        <div class="form-actions">
          <button type="button" onClick={props.onClose}>
            Keep it
          </button>
          <button type="submit" class="danger" disabled={w.busy || !reach?.urns}>
            {verb} {count > 1 ? `${count} resources` : resource.name}
          </button>
        </div>
      </form>
    </ModalDialog>
  );
}

function Consequence({ reach, verb }: { reach: Reach | undefined; verb: string }) {
  if (!reach) return <p role="status">Asking Steward what this would remove…</p>;
  if (reach.blockedBy)
    return (
      <div role="status" class="notice">
        <p>
          These resources depend on it, so it cannot go alone. Choose cascade to remove them too:
        </p>
        <ul>
          {reach.blockedBy.map((urn) => (
            <li key={urn}>{urn}</li>
          ))}
        </ul>
      </div>
    );
  if (reach.error) return <p role="status">{reach.error}</p>;
  return (
    <div role="status" class="delete-list">
      <p>
        <strong>{verb} these resources</strong> (in this order):
      </p>
      <ul aria-label={`Resources to ${verb.toLowerCase()}`}>
        {reach.urns!.map((urn) => (
          <li key={urn}>{urn}</li>
        ))}
      </ul>
    </div>
  );
}

async function dryRunReach(urn: string, query: DeleteFlags): Promise<Reach> {
  const answer = await write('delete', DELETE_PATH, {
    params: { path: { urn }, query: { ...query, dry_run: 'true' } },
  });
  if (answer.ok)
    return { urns: [...(answer.data?.cascade ?? []).map((item) => item.resource.urn), urn] };
  const dependents = (answer.error.error.details as { dependents?: string[] } | undefined)
    ?.dependents;
  if (dependents) return { blockedBy: dependents };
  return { error: answer.error.error.message };
}
