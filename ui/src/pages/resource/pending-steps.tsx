import { pendingSteps, type Resource } from '../../api/resource-types.js';

/** `state.data.pending`: the steps the module says are left, in order (an ordered list a screen reader counts). */
export function PendingSteps({ resource }: { resource: Resource }) {
  const steps = pendingSteps(resource);
  if (steps.length === 0) return null;
  return (
    <>
      <h3 id="pending-title">Steps left</h3>
      <ol class="steps" aria-labelledby="pending-title">
        {steps.map((step, i) => (
          <li key={`${i}-${step}`} class={i === 0 ? 'step-next' : undefined}>
            {step}
            {i === 0 && resource.state.status === 'PENDING' ? (
              <span class="hint"> (next)</span>
            ) : null}
          </li>
        ))}
      </ol>
    </>
  );
}
