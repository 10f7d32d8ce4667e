import type { Configs, Spec } from '../api/resource-types.js';
import { DependenciesFields } from './dependencies-fields.js';
import type { FormContext } from './field-shell.js';
import { LabelsField, parseLabels } from './labels-field.js';
import { type ModuleDocument, schemaOf } from './use-modules.js';
import { SchemaGroup } from './write-form.js';

/** What a create or an edit sets: labels (as typed), dependencies and configs. */
export interface SpecDraft {
  labels: string;
  dependencies: Record<string, string>;
  configs: unknown;
}

/** The labels, the kind's declared dependencies and its generated configs form. */
export function SpecFields(props: {
  ctx: FormContext;
  module: ModuleDocument | undefined;
  project: string;
  draft: SpecDraft;
  onChange(next: SpecDraft): void;
}) {
  const { ctx, module, draft, onChange } = props;
  return (
    <>
      <LabelsField
        ctx={ctx}
        text={draft.labels}
        onChange={(labels) => onChange({ ...draft, labels })}
      />
      {module ? (
        <DependenciesFields
          ctx={ctx}
          module={module}
          project={props.project}
          value={draft.dependencies}
          onChange={(dependencies) => onChange({ ...draft, dependencies })}
        />
      ) : null}
      <SchemaGroup
        legend="Configs"
        ctx={ctx}
        schema={schemaOf(module?.config_schema)}
        pointer="/spec/configs"
        value={draft.configs}
        onChange={(configs) => onChange({ ...draft, configs })}
      />
    </>
  );
}

/** The draft as the nested body of POST /resources and PATCH. */
export function specBody(draft: SpecDraft): { labels: Record<string, string>; spec: Spec } {
  return {
    labels: parseLabels(draft.labels),
    spec: { configs: (draft.configs ?? {}) as Configs, dependencies: draft.dependencies },
  };
}
