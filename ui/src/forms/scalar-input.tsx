import { describedBy, FieldNotes, FieldShell, type FormContext, LabelText } from './field-shell.js';
import { fieldKind, type JsonSchema } from './json-schema.js';

export interface ScalarProps {
  ctx: FormContext;
  schema: JsonSchema;
  pointer: string;
  label: string;
  required: boolean;
  help: string | undefined;
  value: unknown;
  onChange(next: unknown): void;
}

/** A field for one value: a select for an enum, a checkbox, a number, a password (writeOnly) or text. */
export function ScalarInput(props: ScalarProps) {
  const { ctx, schema, pointer, help, value, onChange } = props;
  const kind = fieldKind(schema);
  const aria = describedBy(ctx, pointer, Boolean(help));
  if (kind === 'boolean')
    return (
      <div class="field field-check">
        <input
          type="checkbox"
          {...aria}
          checked={value === true}
          onChange={(e) => onChange(e.currentTarget.checked)}
        />
        <label for={aria.id}>
          <LabelText label={props.label} required={props.required} />
        </label>
        <FieldNotes ctx={ctx} pointer={pointer} help={help} />
      </div>
    );
  let input;
  if (schema.enum) {
    const options = schema.enum;
    const at = options.findIndex((option) => JSON.stringify(option) === JSON.stringify(value));
    input = (
      <select
        {...aria}
        required={props.required}
        value={at < 0 ? '' : String(at)}
        onChange={(e) => {
          const index = e.currentTarget.value;
          onChange(index === '' ? undefined : options[Number(index)]);
        }}
      >
        {props.required && at >= 0 ? null : <option value="">(none)</option>}
        {options.map((option, index) => (
          <option key={index} value={String(index)}>
            {typeof option === 'string' ? option : JSON.stringify(option)}
          </option>
        ))}
      </select>
    );
  } else if (kind === 'number' || kind === 'integer') {
    input = (
      <input
        type="number"
        inputMode={kind === 'integer' ? 'numeric' : 'decimal'}
        step={kind === 'integer' ? 1 : 'any'}
        {...aria}
        required={props.required}
        value={typeof value === 'number' ? String(value) : ''}
        onInput={(e) => {
          const text = e.currentTarget.value;
          onChange(text === '' ? undefined : Number(text));
        }}
      />
    );
  } else if (schema.writeOnly) {
    // A secret: never pre-filled (the API never returns one), never kept by the browser.
    input = (
      <input
        type="password"
        autoComplete="new-password"
        {...aria}
        required={props.required && !ctx.keepSecrets}
        value={typeof value === 'string' ? value : ''}
        onInput={(e) => onChange(e.currentTarget.value || undefined)}
      />
    );
  } else {
    input = (
      <input
        type="text"
        {...aria}
        required={props.required}
        value={kind === 'any' ? anyText(value) : typeof value === 'string' ? value : ''}
        onInput={(e) => {
          const text = e.currentTarget.value;
          if (text === '' && !props.required) onChange(undefined);
          else onChange(kind === 'any' ? parseAny(text) : text);
        }}
      />
    );
  }
  return (
    <FieldShell
      ctx={ctx}
      pointer={pointer}
      label={props.label}
      required={props.required}
      help={help}
    >
      {input}
    </FieldShell>
  );
}

/** A schema without a type takes any JSON: shown as JSON, except a string as itself. */
function anyText(value: unknown): string {
  if (value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Typed text that parses as JSON is that value; anything else is the text. */
function parseAny(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
