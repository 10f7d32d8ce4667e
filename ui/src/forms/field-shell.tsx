import type { ComponentChildren } from 'preact';

import type { FieldErrors } from './server-errors.js';

/** What every field of one generated form shares: the id prefix (unique per form) and the server's errors. */
export interface FormContext {
  idPrefix: string;
  errors: FieldErrors;
  /** An edit form: an empty writeOnly field keeps the stored secret, and says so. */
  keepSecrets?: boolean;
}

/** The element id of the field at `pointer` (ids may hold only a few characters safely in selectors). */
export function fieldId(ctx: FormContext, pointer: string): string {
  return `${ctx.idPrefix}${pointer.replace(/[^A-Za-z0-9_-]/g, (c) => `_${c.charCodeAt(0)}_`)}`;
}

/** aria-describedby and aria-invalid for the input at `pointer`: its help and its error, when it has them. */
export function describedBy(ctx: FormContext, pointer: string, hasHelp: boolean) {
  const id = fieldId(ctx, pointer);
  const invalid = ctx.errors.has(pointer);
  const ids = [hasHelp ? `${id}-help` : '', invalid ? `${id}-error` : ''].filter(Boolean);
  return {
    id,
    'aria-describedby': ids.length ? ids.join(' ') : undefined,
    'aria-invalid': invalid ? ('true' as const) : undefined,
  };
}

/** A field's help text (the schema's description, its default) and the server's error under the input. */
export function FieldNotes({
  ctx,
  pointer,
  help,
}: {
  ctx: FormContext;
  pointer: string;
  help: string | undefined;
}) {
  const id = fieldId(ctx, pointer);
  const errors = ctx.errors.get(pointer);
  return (
    <>
      {help ? (
        <p class="field-help" id={`${id}-help`}>
          {help}
        </p>
      ) : null}
      {errors ? (
        <p class="field-error" id={`${id}-error`}>
          {errors.join('; ')}
        </p>
      ) : null}
    </>
  );
}

/** A label with the required mark: a star to see, the word to hear. */
export function LabelText({ label, required }: { label: string; required: boolean }) {
  return (
    <>
      {label}
      {required ? (
        <>
          <span aria-hidden="true" class="required-mark">
            {' '}
            *
          </span>
          <span class="visually-hidden"> (required)</span>
        </>
      ) : null}
    </>
  );
}

/** One labelled field: the label above, the input, its notes under it. */
export function FieldShell(props: {
  ctx: FormContext;
  pointer: string;
  label: string;
  required: boolean;
  help: string | undefined;
  children: ComponentChildren;
}) {
  return (
    <div class="field">
      <label for={fieldId(props.ctx, props.pointer)}>
        <LabelText label={props.label} required={props.required} />
      </label>
      {props.children}
      <FieldNotes ctx={props.ctx} pointer={props.pointer} help={props.help} />
    </div>
  );
}
