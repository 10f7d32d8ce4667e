import type { Resource } from '../../api/resource-types.js';
import { FieldList } from './field-list.js';

/** What the resource is asked to be: configs (secrets left out by the API), labels, policy. */
export function SpecSection({ resource }: { resource: Resource }) {
  const { configs, policy } = resource.spec;
  return (
    <section aria-labelledby="spec-title" class="panel">
      <h2 id="spec-title">Spec</h2>
      <p class="hint">
        Version {resource.version}; secret configs are never shown (the API leaves them out).
      </p>
      <h3>Configs</h3>
      <FieldList fields={configs} label="Configs" empty="No configs." />
      <h3>Labels</h3>
      <FieldList fields={resource.labels} label="Labels" empty="No labels." />
      <h3>Policy</h3>
      <FieldList
        fields={{
          mode: policy.mode,
          on_delete: policy.on_delete,
          ...(policy.deadline === undefined ? {} : { deadline: policy.deadline }),
        }}
        label="Policy"
      />
    </section>
  );
}
