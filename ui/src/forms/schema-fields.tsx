import { FieldNotes, type FormContext, LabelText } from './field-shell.js';
import { asObject, childPointer, fieldKind, initialValue, type JsonSchema } from './json-schema.js';
import { ScalarInput } from './scalar-input.js';

interface FieldProps {
  ctx: FormContext;
  schema: JsonSchema;
  pointer: string;
  label: string;
  required: boolean;
  value: unknown;
  onChange(next: unknown): void;
}

/**
 * The fields of an object schema (a module's configs or an action's params),
 * generated from the schema: one field per property, in the schema's order.
 * `pointer` is where the object sits in the request body (`/spec/configs`), so a
 * server error naming `/spec/configs/port` lands at the port field.
 */
export function SchemaFields(props: {
  ctx: FormContext;
  schema: JsonSchema;
  pointer: string;
  value: unknown;
  onChange(next: Record<string, unknown>): void;
}) {
  const object = asObject(props.value);
  const required = new Set(props.schema.required ?? []);
  return (
    <>
      {Object.entries(props.schema.properties ?? {}).map(([key, child]) => (
        <SchemaField
          key={key}
          ctx={props.ctx}
          schema={child}
          pointer={childPointer(props.pointer, key)}
          label={child.title ?? key}
          required={required.has(key)}
          value={object[key]}
          onChange={(next) => {
            const copy = { ...object };
            if (next === undefined) delete copy[key];
            else copy[key] = next;
            props.onChange(copy);
          }}
        />
      ))}
    </>
  );
}

/** One property: a fieldset for an object or an array, an input for the rest. */
export function SchemaField(props: FieldProps) {
  const { ctx, schema, pointer } = props;
  const kind = fieldKind(schema);
  const help = helpOf(schema, ctx);
  if (kind === 'object')
    return (
      <fieldset class="field-group">
        <legend>
          <LabelText label={props.label} required={props.required} />
        </legend>
        <FieldNotes ctx={ctx} pointer={pointer} help={help} />
        <SchemaFields
          ctx={ctx}
          schema={schema}
          pointer={pointer}
          value={props.value}
          onChange={props.onChange}
        />
      </fieldset>
    );
  if (kind === 'array') return <ArrayField {...props} help={help} />;
  return <ScalarInput {...props} help={help} />;
}

function ArrayField(props: FieldProps & { help: string | undefined }) {
  const { ctx, schema, pointer, label } = props;
  const items = Array.isArray(props.value) ? props.value : [];
  const itemSchema = schema.items ?? {};
  const set = (next: unknown[]) => props.onChange(next);
  return (
    <fieldset class="field-group">
      <legend>
        <LabelText label={label} required={props.required} />
      </legend>
      <FieldNotes ctx={ctx} pointer={pointer} help={props.help} />
      <ol class="array-items">
        {items.map((item, index) => (
          <li key={index}>
            <SchemaField
              ctx={ctx}
              schema={itemSchema}
              pointer={childPointer(pointer, index)}
              label={`${label} item ${index + 1}`}
              required={true}
              value={item}
              onChange={(next) => set(items.map((old, at) => (at === index ? next : old)))}
            />
            <button type="button" onClick={() => set(items.filter((_, at) => at !== index))}>
              Remove {label} item {index + 1}
            </button>
          </li>
        ))}
      </ol>
      <button type="button" onClick={() => set([...items, newItem(itemSchema)])}>
        Add {label} item
      </button>
    </fieldset>
  );
}

function newItem(schema: JsonSchema): unknown {
  const start = initialValue(schema);
  if (start !== undefined) return start;
  return fieldKind(schema) === 'string' ? '' : undefined;
}

/** The schema's description, its default, and for a kept secret how to keep it. */
function helpOf(schema: JsonSchema, ctx: FormContext): string | undefined {
  const parts = [
    schema.description,
    schema.default !== undefined && !schema.writeOnly
      ? `Default: ${JSON.stringify(schema.default)}.`
      : undefined,
    schema.writeOnly && ctx.keepSecrets ? 'Leave empty to keep the stored value.' : undefined,
    schema.writeOnly && !ctx.keepSecrets ? 'A secret: Steward never shows it again.' : undefined,
  ].filter(Boolean);
  return parts.length ? parts.join(' ') : undefined;
}
