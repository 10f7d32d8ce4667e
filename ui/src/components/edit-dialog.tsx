import { useMemo, useState } from 'preact/hooks';

import type { Resource } from '../api/resource-types.js';
import { ifMatch } from '../api/write.js';
import type { FormContext } from '../forms/field-shell.js';
import { type JsonSchema, withoutSecrets } from '../forms/json-schema.js';
import { labelsText } from '../forms/labels-field.js';
import { placeErrors } from '../forms/server-errors.js';
import { specBody, type SpecDraft, SpecFields } from '../forms/spec-fields.js';
import { type ModuleDocument, specFieldPointers } from '../forms/use-modules.js';
import { useWrite } from '../forms/use-write.js';
import { WriteForm } from '../forms/write-form.js';
import { ModalDialog } from './modal-dialog.js';
import { WriteFeedback } from './write-feedback.js';

/**
 * Edit (PATCH) with the generated form pre-filled from the spec. A secret field
 * starts empty, as the API never returns one, and an empty one is left out of
 * the PATCH, so Steward keeps the stored secret.
 */
export function EditDialog(props: {
  resource: Resource;
  module: ModuleDocument;
  onDone(): void;
  onReload(): void;
  onClose(): void;
}) {
  const { resource, module } = props;
  const schema = module.config_schema as JsonSchema;
  // The version the user edits: a change made since is a 412, not silently overwritten.
  const [version] = useState(resource.version);
  const [draft, setDraft] = useState<SpecDraft>(() => ({
    labels: labelsText(resource.labels),
    dependencies: { ...(resource.spec.dependencies as Record<string, string>) },
    configs: withoutSecrets(schema, resource.spec.configs),
  }));
  const w = useWrite();
  const shown = useMemo(
    () => new Set(specFieldPointers(module, draft.configs)),
    [module, draft.configs],
  );
  const placed = placeErrors(w.error, shown);
  const ctx: FormContext = { idPrefix: 'edit', errors: placed.fields, keepSecrets: true };
  const send = async (dryRun: boolean) => {
    const params = { path: { urn: resource.urn }, header: ifMatch(version) };
    const init = { params, body: specBody(draft) };
    if ((await w.send('patch', '/api/v1beta1/resources/{urn}', init, dryRun)) && !dryRun)
      props.onDone();
  };
  return (
    <ModalDialog title={`Edit ${resource.name}`} onClose={props.onClose}>
      <WriteForm
        banner={<WriteFeedback error={placed.banner} status={w.status} onReload={props.onReload} />}
        busy={w.busy}
        submitLabel="Save"
        preview={w.preview}
        onSend={(dryRun) => void send(dryRun)}
      >
        <SpecFields
          ctx={ctx}
          module={module}
          project={resource.project}
          draft={draft}
          onChange={setDraft}
        />
      </WriteForm>
    </ModalDialog>
  );
}
