import { useEffect, useState } from 'preact/hooks';

import { api } from '../api/client.js';
import { describedBy, FieldShell, type FormContext } from './field-shell.js';
import { childPointer } from './json-schema.js';
import type { Kind, ModuleDocument } from './use-modules.js';

/**
 * One select per dependency the module declares, listing the resources of the
 * declared kind in the project (a dependency must be in the same project).
 */
export function DependenciesFields(props: {
  ctx: FormContext;
  module: ModuleDocument;
  project: string;
  value: Record<string, string>;
  onChange(next: Record<string, string>): void;
}) {
  const declared = Object.entries(props.module.dependencies);
  if (declared.length === 0) return null;
  return (
    <fieldset class="field-group">
      <legend>Dependencies</legend>
      {declared.map(([name, dependency]) => (
        <DependencySelect
          key={name}
          {...props}
          name={name}
          kind={dependency.kind}
          required={!dependency.optional}
        />
      ))}
    </fieldset>
  );
}

function DependencySelect(props: {
  ctx: FormContext;
  project: string;
  name: string;
  kind: string;
  required: boolean;
  value: Record<string, string>;
  onChange(next: Record<string, string>): void;
}) {
  const candidates = useCandidates(props.kind, props.project);
  const pointer = childPointer('/spec/dependencies', props.name);
  const chosen = props.value[props.name] ?? '';
  return (
    <FieldShell
      ctx={props.ctx}
      pointer={pointer}
      label={props.name}
      required={props.required}
      help={`A ${props.kind} resource of project ${props.project || '(choose a project)'}.`}
    >
      <select
        {...describedBy(props.ctx, pointer, true)}
        required={props.required}
        value={chosen}
        onChange={(e) => {
          const next = { ...props.value };
          if (e.currentTarget.value) next[props.name] = e.currentTarget.value;
          else delete next[props.name];
          props.onChange(next);
        }}
      >
        <option value="">(none)</option>
        {candidates.map((urn) => (
          <option key={urn} value={urn}>
            {urn}
          </option>
        ))}
      </select>
    </FieldShell>
  );
}

/** The URNs of one kind in one project (the first 500: a longer list is not a select's job). */
function useCandidates(kind: string, project: string): string[] {
  const [urns, setUrns] = useState<string[]>([]);
  useEffect(() => {
    if (!project) return setUrns([]);
    let live = true;
    void api
      .GET('/api/v1beta1/resources', {
        params: { query: { kind: kind as Kind, project, page_size: 500 } },
      })
      .then(({ data }) => live && setUrns(data?.resources.map((r) => r.urn) ?? []));
    return () => void (live = false);
  }, [kind, project]);
  return urns;
}
