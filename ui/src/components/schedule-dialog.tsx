import { useMemo, useState } from 'preact/hooks';

import type { ActionParams, Configs, Resource } from '../api/resource-types.js';
import { describedBy, FieldShell, type FormContext } from '../forms/field-shell.js';
import {
  fieldPointers,
  initialValue,
  type JsonSchema,
  withoutSecrets,
} from '../forms/json-schema.js';
import { ScheduleWhen, type When, whenBody } from '../forms/schedule-when.js';
import { placeErrors } from '../forms/server-errors.js';
import type { ModuleDocument } from '../forms/use-modules.js';
import { useWrite } from '../forms/use-write.js';
import { SchemaGroup, WriteForm } from '../forms/write-form.js';
import { ModalDialog } from './modal-dialog.js';
import { WriteFeedback } from './write-feedback.js';

const LIFECYCLE = new Set(['create', 'update', 'delete']);

/** Schema of an update's configs a schedule may carry: no secrets (schedules are stored as written). */
function withoutSecretFields(schema: JsonSchema): JsonSchema {
  const properties = Object.entries(schema.properties ?? {}).filter(([, s]) => !s.writeOnly);
  return { ...schema, properties: Object.fromEntries(properties), required: [] };
}

/** A schedule (POST …/schedules): a module action, an update or a delete, once at a time or on a cron. */
export function ScheduleDialog(props: {
  resource: Resource;
  module: ModuleDocument;
  onDone(): void;
  onClose(): void;
}) {
  const { resource, module } = props;
  const actions = Object.keys(module.actions).filter((name) => !LIFECYCLE.has(name));
  const requests = [...actions, 'update', 'delete'];
  const [request, setRequest] = useState(requests[0] ?? 'delete');
  const [when, setWhen] = useState<When>({ repeat: false, at: '', cron: '', timezone: 'UTC' });
  const schema: JsonSchema | undefined =
    request === 'update'
      ? withoutSecretFields(module.config_schema as JsonSchema)
      : request === 'delete'
        ? undefined
        : ((module.actions[request]?.params_schema as JsonSchema | null) ?? undefined);
  const where = request === 'update' ? '/request/configs' : '/request/params';
  /** An update starts from the current configs (it replaces them whole), an action from its defaults. */
  const startValues = (name: string): unknown => {
    if (name === 'update')
      return withoutSecrets(module.config_schema as JsonSchema, resource.spec.configs);
    const params = name === 'delete' ? null : module.actions[name]?.params_schema;
    return params ? initialValue(params as JsonSchema) : undefined;
  };
  const [values, setValues] = useState<unknown>(() => startValues(request));
  const [done, setDone] = useState(false);
  const w = useWrite();
  const shown = useMemo(
    () =>
      new Set([
        '/at',
        '/cron',
        '/timezone',
        '/request/action',
        ...(schema ? fieldPointers(schema, where, values) : []),
      ]),
    [schema, where, values],
  );
  const placed = placeErrors(w.error, shown);
  const ctx: FormContext = { idPrefix: 'schedule', errors: placed.fields };
  const choose = (next: string) => {
    setRequest(next);
    setValues(startValues(next));
    w.clear();
  };
  const send = async () => {
    const body = {
      request: {
        action: request,
        ...(values === undefined || request === 'delete'
          ? {}
          : request === 'update'
            ? { configs: values as Configs }
            : { params: values as ActionParams }),
      },
      ...whenBody(when),
    };
    const params = { path: { urn: resource.urn } };
    if (await w.send('post', '/api/v1beta1/resources/{urn}/schedules', { params, body })) {
      setDone(true);
      props.onDone();
    }
  };
  return (
    <ModalDialog title={`Schedule a request for ${resource.name}`} onClose={props.onClose}>
      <WriteForm
        banner={<WriteFeedback error={placed.banner} status={w.status} onReload={props.onClose} />}
        busy={w.busy}
        submitLabel="Create schedule"
        dryRun={false}
        onSend={() => void send()}
      >
        {done ? <p role="status">Scheduled.</p> : null}
        <FieldShell ctx={ctx} pointer="/request/action" label="Request" required help={undefined}>
          <select
            {...describedBy(ctx, '/request/action', false)}
            value={request}
            onChange={(e) => choose(e.currentTarget.value)}
          >
            {requests.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </FieldShell>
        {schema && Object.keys(schema.properties ?? {}).length > 0 ? (
          <SchemaGroup
            legend={request === 'update' ? 'Configs to set' : 'Parameters'}
            ctx={ctx}
            schema={schema}
            pointer={where}
            value={values}
            onChange={setValues}
          />
        ) : null}
        <ScheduleWhen ctx={ctx} value={when} onChange={setWhen} />
      </WriteForm>
    </ModalDialog>
  );
}
