import { showValue } from '../../api/json-diff.js';

/**
 * An object's fields as a definition list: each value as JSON text (never as
 * HTML), so `"1"` and `1` differ and a nested object reads as one line.
 */
export function FieldList({
  fields,
  label,
  empty = 'None.',
}: {
  fields: Record<string, unknown>;
  label: string;
  empty?: string;
}) {
  const entries = Object.entries(fields);
  if (entries.length === 0) return <p class="hint">{empty}</p>;
  return (
    <dl class="fields" aria-label={label}>
      {entries.map(([key, value]) => (
        <div key={key}>
          <dt>{key}</dt>
          <dd>
            <code>{typeof value === 'string' ? value : showValue(value)}</code>
          </dd>
        </div>
      ))}
    </dl>
  );
}
