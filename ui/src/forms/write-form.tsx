import type { ComponentChildren } from 'preact';

import { type DryRunAnswer, DryRunPreview } from '../components/dry-run-preview.js';
import { FieldNotes, type FormContext } from './field-shell.js';
import type { JsonSchema } from './json-schema.js';
import { SchemaFields } from './schema-fields.js';

/**
 * A form that writes: the refusal first (a banner or the 412 notice), the
 * fields, then Preview (dry run) when the request takes one and the submit
 * button, then the preview. Steward checks the fields, not the browser.
 */
export function WriteForm(props: {
  banner: ComponentChildren;
  busy: boolean;
  submitLabel: string;
  /** The request takes `?dry_run=true`: offer a preview. */
  dryRun?: boolean;
  preview?: DryRunAnswer | undefined;
  onSend(dryRun: boolean): void;
  children: ComponentChildren;
}) {
  return (
    <>
      <form
        noValidate
        class="schema-form"
        onSubmit={(e) => {
          e.preventDefault();
          props.onSend(false);
        }}
      >
        {props.banner}
        {props.children}
        <div class="form-actions">
          {props.dryRun === false ? null : (
            <button type="button" disabled={props.busy} onClick={() => props.onSend(true)}>
              Preview (dry run)
            </button>
          )}
          <button type="submit" disabled={props.busy}>
            {props.submitLabel}
          </button>
        </div>
      </form>
      {props.preview ? <DryRunPreview answer={props.preview} /> : null}
    </>
  );
}

/** A schema's fields as one group (Configs, Parameters), with the errors that name the group itself. */
export function SchemaGroup(props: {
  legend: string;
  ctx: FormContext;
  schema: JsonSchema;
  pointer: string;
  value: unknown;
  onChange(next: Record<string, unknown>): void;
}) {
  return (
    <fieldset class="field-group">
      <legend>{props.legend}</legend>
      <FieldNotes ctx={props.ctx} pointer={props.pointer} help={undefined} />
      <SchemaFields
        ctx={props.ctx}
        schema={props.schema}
        pointer={props.pointer}
        value={props.value}
        onChange={props.onChange}
      />
    </fieldset>
  );
}
