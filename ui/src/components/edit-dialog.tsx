import { useMemo, useState } from 'preact/hooks';

import type { Resource } from '../api/resource-types.js';
import { resourcePath } from '../api/write.js';
import { DependenciesFields } from '../forms/dependencies-fields.js';
import { FieldNotes, type FormContext } from '../forms/field-shell.js';
import { fieldPointers, type JsonSchema, withoutSecrets } from '../forms/json-schema.js';
import { LabelsField, labelsText, parseLabels } from '../forms/labels-field.js';
import { SchemaFields } from '../forms/schema-fields.js';
import { placeErrors } from '../forms/server-errors.js';
import type { ModuleDocument } from '../forms/use-modules.js';
import { useWrite } from '../forms/use-write.js';
import { DryRunPreview } from './dry-run-preview.js';
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
  const [configs, setConfigs] = useState(() => withoutSecrets(schema, resource.spec.configs));
  const [labels, setLabels] = useState(() => labelsText(resource.labels));
  const [dependencies, setDependencies] = useState<Record<string, string>>(() => ({
    ...(resource.spec.dependencies as Record<string, string>),
  }));
  const w = useWrite();
  const shown = useMemo(
    () =>
      new Set([
        '/labels',
        '/spec/dependencies',
        ...Object.keys(module.dependencies).map((dep) => `/spec/dependencies/${dep}`),
        ...fieldPointers(schema, '/spec/configs', configs),
      ]),
    [module, schema, configs],
  );
  const placed = placeErrors(w.error, shown);
  const ctx: FormContext = { idPrefix: 'edit', errors: placed.fields, keepSecrets: true };
  const send = async (dryRun: boolean) => {
    const body = { labels: parseLabels(labels), spec: { configs, dependencies } };
    const path = resourcePath(resource.urn);
    if ((await w.send('PATCH', path, { body, version }, dryRun)) && !dryRun) props.onDone();
  };
  return (
    <ModalDialog title={`Edit ${resource.name}`} onClose={props.onClose}>
      <form
        noValidate
        class="schema-form"
        onSubmit={(e) => {
          e.preventDefault();
          void send(false);
        }}
      >
        <WriteFeedback error={placed.banner} status={w.status} onReload={props.onReload} />
        <LabelsField ctx={ctx} text={labels} onChange={setLabels} />
        <DependenciesFields
          ctx={ctx}
          module={module}
          project={resource.project}
          value={dependencies}
          onChange={setDependencies}
        />
        <fieldset class="field-group">
          <legend>Configs</legend>
          <FieldNotes ctx={ctx} pointer="/spec/configs" help={undefined} />
          <SchemaFields
            ctx={ctx}
            schema={schema}
            pointer="/spec/configs"
            value={configs}
            onChange={setConfigs}
          />
        </fieldset>
        <div class="form-actions">
          <button type="button" disabled={w.busy} onClick={() => void send(true)}>
            Preview (dry run)
          </button>
          <button type="submit" disabled={w.busy}>
            Save
          </button>
        </div>
      </form>
      {w.preview ? <DryRunPreview answer={w.preview} /> : null}
    </ModalDialog>
  );
}
