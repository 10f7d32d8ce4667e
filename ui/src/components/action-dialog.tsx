import { useMemo, useState } from 'preact/hooks';

import type { ActionParams, Resource } from '../api/resource-types.js';
import { ifMatch } from '../api/write.js';
import type { FormContext } from '../forms/field-shell.js';
import { fieldPointers, initialValue, type JsonSchema } from '../forms/json-schema.js';
import { placeErrors } from '../forms/server-errors.js';
import { useWrite } from '../forms/use-write.js';
import { SchemaGroup, WriteForm } from '../forms/write-form.js';
import { ModalDialog } from './modal-dialog.js';
import { WriteFeedback } from './write-feedback.js';

/** A module action (POST …/actions/{action}) with its params form generated from the action's paramsSchema. */
export function ActionDialog(props: {
  resource: Resource;
  action: string;
  description: string | null;
  paramsSchema: JsonSchema | null;
  onDone(): void;
  onReload(): void;
  onClose(): void;
}) {
  const { resource, action } = props;
  const schema = props.paramsSchema ?? { type: 'object', properties: {} };
  const [version] = useState(resource.version);
  const [params, setParams] = useState<unknown>(() => initialValue(schema));
  const w = useWrite();
  const shown = useMemo(() => new Set(fieldPointers(schema, '/params', params)), [schema, params]);
  const placed = placeErrors(w.error, shown);
  const ctx: FormContext = { idPrefix: `action-${action}`, errors: placed.fields };
  const send = async (dryRun: boolean) => {
    const init = {
      params: { path: { urn: resource.urn, action }, header: ifMatch(version) },
      // The params form was generated from the action's schema, which Steward checks them against.
      body: (params ?? {}) as ActionParams,
    };
    const path = '/api/v1beta1/resources/{urn}/actions/{action}';
    if ((await w.send('post', path, init, dryRun)) && !dryRun) props.onDone();
  };
  const hasParams = Object.keys(schema.properties ?? {}).length > 0;
  return (
    <ModalDialog title={`Run ${action} on ${resource.name}`} onClose={props.onClose}>
      {props.description ? <p>{props.description}</p> : null}
      <WriteForm
        banner={<WriteFeedback error={placed.banner} status={w.status} onReload={props.onReload} />}
        busy={w.busy}
        submitLabel={`Run ${action}`}
        preview={w.preview}
        onSend={(dryRun) => void send(dryRun)}
      >
        {hasParams ? (
          <SchemaGroup
            legend="Parameters"
            ctx={ctx}
            schema={schema}
            pointer="/params"
            value={params}
            onChange={setParams}
          />
        ) : (
          <p>This action takes no parameters.</p>
        )}
      </WriteForm>
    </ModalDialog>
  );
}
