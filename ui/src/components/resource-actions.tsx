import { useState } from 'preact/hooks';

import type { Resource as ResourceDocument } from '../api/resource-types.js';
import { ifMatch } from '../api/write.js';
import type { JsonSchema } from '../forms/json-schema.js';
import { useModules } from '../forms/use-modules.js';
import { useWrite } from '../forms/use-write.js';
import { canChange, type Whoami } from '../session.js';
import { ActionDialog } from './action-dialog.js';
import { DeleteDialog } from './delete-dialog.js';
import { EditDialog } from './edit-dialog.js';
import { ScheduleDialog } from './schedule-dialog.js';
import { WriteFeedback } from './write-feedback.js';

export interface ResourceActionsProps {
  resource: ResourceDocument;
  whoami: Whoami;
  onChanged(): void;
}

type Open =
  | { dialog: 'edit' }
  | { dialog: 'delete' }
  | { dialog: 'schedule' }
  | { dialog: 'action'; action: string };

/** allowed_actions entries that are requests of their own, not module actions (docs/api.md#allowed-actions). */
const REQUESTS = new Set([
  'update',
  'delete',
  'orphan',
  'retry',
  'cancel',
  'refresh',
  'pause',
  'resume',
]);

/**
 * The writes a caller may make on a resource, as buttons: exactly what the API
 * says it allows now (`allowed_actions`, computed for this caller: a viewer gets
 * none), each sending `If-Match` with the version shown where the API takes it.
 */
export function ResourceActions({ resource, whoami, onChanged }: ResourceActionsProps) {
  const allowed = resource.allowed_actions ?? [];
  const { modules } = useModules();
  const module = modules?.find((m) => m.kind === resource.kind);
  const [open, setOpen] = useState<Open>();
  const w = useWrite();
  if (allowed.length === 0 || !canChange(whoami, resource.project)) return null;

  const close = () => setOpen(undefined);
  const done = () => {
    close();
    onChanged();
  };
  const sendNow = async (request: DirectRequest) => {
    if (await request.send()) onChanged();
  };
  const has = (name: string) => allowed.includes(name);
  const moduleActions = allowed.filter((name) => !REQUESTS.has(name));
  const direct = directRequests(resource, w.send).filter((request) => has(request.name));

  return (
    <section class="resource-actions" aria-label="Actions">
      <WriteFeedback error={w.error} status={w.status} onReload={() => (w.clear(), onChanged())} />
      <div class="button-row">
        {has('update') && module ? (
          <button type="button" onClick={() => setOpen({ dialog: 'edit' })}>
            Edit
          </button>
        ) : null}
        {module
          ? moduleActions.map((action) => (
              <button
                key={action}
                type="button"
                onClick={() => setOpen({ dialog: 'action', action })}
              >
                Run {action}…
              </button>
            ))
          : null}
        {direct.map((request) => (
          <button
            key={request.name}
            type="button"
            disabled={w.busy}
            onClick={() => void sendNow(request)}
          >
            {request.label}
          </button>
        ))}
        {module ? (
          <button type="button" onClick={() => setOpen({ dialog: 'schedule' })}>
            Schedule…
          </button>
        ) : null}
        {has('delete') || has('orphan') ? (
          <button type="button" class="danger" onClick={() => setOpen({ dialog: 'delete' })}>
            Delete…
          </button>
        ) : null}
      </div>
      {open?.dialog === 'edit' && module ? (
        <EditDialog
          resource={resource}
          module={module}
          onDone={done}
          onReload={done}
          onClose={close}
        />
      ) : null}
      {open?.dialog === 'action' ? (
        <ActionDialog
          resource={resource}
          action={open.action}
          description={module?.actions[open.action]?.description ?? null}
          paramsSchema={(module?.actions[open.action]?.params_schema as JsonSchema | null) ?? null}
          onDone={done}
          onReload={done}
          onClose={close}
        />
      ) : null}
      {open?.dialog === 'delete' ? (
        <DeleteDialog resource={resource} onDone={done} onReload={done} onClose={close} />
      ) : null}
      {open?.dialog === 'schedule' && module ? (
        <ScheduleDialog resource={resource} module={module} onDone={onChanged} onClose={close} />
      ) : null}
    </section>
  );
}

/** A request sent at one click, without a form: its allowed_actions name, button label and write. */
interface DirectRequest {
  name: string;
  label: string;
  /** Answers whether it was accepted. */
  send(): Promise<unknown>;
}

function directRequests(
  resource: ResourceDocument,
  send: ReturnType<typeof useWrite>['send'],
): DirectRequest[] {
  const at = { path: { urn: resource.urn } };
  // Retry and refresh take If-Match (docs/api.md); pause, resume and a cancel do not.
  const atVersion = { ...at, header: ifMatch(resource.version) };
  const operation = resource.state.operation_id;
  return [
    {
      name: 'retry',
      label: 'Retry',
      send: () => send('post', '/api/v1beta1/resources/{urn}/retry', { params: atVersion }),
    },
    ...(operation
      ? [
          {
            name: 'cancel',
            label: 'Cancel the operation',
            send: () =>
              send('post', '/api/v1beta1/operations/{id}/cancel', {
                params: { path: { id: operation } },
              }),
          },
        ]
      : []),
    {
      name: 'refresh',
      label: 'Refresh',
      send: () => send('post', '/api/v1beta1/resources/{urn}/refresh', { params: atVersion }),
    },
    {
      name: 'pause',
      label: 'Pause',
      send: () => send('post', '/api/v1beta1/resources/{urn}/pause', { params: at }),
    },
    {
      name: 'resume',
      label: 'Resume',
      send: () => send('post', '/api/v1beta1/resources/{urn}/resume', { params: at }),
    },
  ];
}
