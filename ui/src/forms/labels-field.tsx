import { describedBy, FieldShell, type FormContext } from './field-shell.js';

/**
 * Labels as text, one `key=value` a line (as the CLI's --label takes them): the
 * server checks keys and values and names `/labels/<key>` when one is wrong.
 */
export function LabelsField(props: {
  ctx: FormContext;
  text: string;
  onChange(text: string): void;
}) {
  const help = 'One key=value a line, for example team=ops.';
  return (
    <FieldShell ctx={props.ctx} pointer="/labels" label="Labels" required={false} help={help}>
      <textarea
        rows={3}
        {...describedBy(props.ctx, '/labels', true)}
        value={props.text}
        onInput={(e) => props.onChange(e.currentTarget.value)}
      />
    </FieldShell>
  );
}

/** The labels object of the text; a line without `=` is a key with an empty value (the server says if that is wrong). */
export function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (!trimmed) continue;
    const at = trimmed.indexOf('=');
    labels[at < 0 ? trimmed : trimmed.slice(0, at).trim()] =
      at < 0 ? '' : trimmed.slice(at + 1).trim();
  }
  return labels;
}

export function labelsText(labels: Record<string, string>): string {
  return Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join('\n');
}
