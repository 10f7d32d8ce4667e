import type { CreateSchedule } from '../api/resource-types.js';
import { describedBy, FieldShell, type FormContext } from './field-shell.js';

export interface When {
  repeat: boolean;
  /** datetime-local text, in the browser's time zone. */
  at: string;
  cron: string;
  timezone: string;
}

/** The `at` or `cron` + `timezone` part of a schedule (docs/api.md#schedules). */
export function ScheduleWhen(props: { ctx: FormContext; value: When; onChange(next: When): void }) {
  const { ctx, value } = props;
  const set = (part: Partial<When>) => props.onChange({ ...value, ...part });
  return (
    <>
      <fieldset class="field-group">
        <legend>When</legend>
        <div class="field field-check">
          <input
            type="radio"
            name="schedule-when"
            id="schedule-once"
            checked={!value.repeat}
            onChange={() => set({ repeat: false })}
          />
          <label for="schedule-once">Once, at a time</label>
        </div>
        <div class="field field-check">
          <input
            type="radio"
            name="schedule-when"
            id="schedule-repeat"
            checked={value.repeat}
            onChange={() => set({ repeat: true })}
          />
          <label for="schedule-repeat">Repeatedly, on a cron schedule</label>
        </div>
      </fieldset>
      {value.repeat ? (
        <>
          <FieldShell
            ctx={ctx}
            pointer="/cron"
            label="Cron"
            required
            help="Five fields: minute hour day-of-month month day-of-week, for example 0 2 * * *."
          >
            <input
              type="text"
              {...describedBy(ctx, '/cron', true)}
              required
              value={value.cron}
              onInput={(e) => set({ cron: e.currentTarget.value })}
            />
          </FieldShell>
          <FieldShell
            ctx={ctx}
            pointer="/timezone"
            label="Time zone"
            required={false}
            help="An IANA time zone such as Europe/Berlin; UTC when empty."
          >
            <input
              type="text"
              {...describedBy(ctx, '/timezone', true)}
              value={value.timezone}
              onInput={(e) => set({ timezone: e.currentTarget.value })}
            />
          </FieldShell>
        </>
      ) : (
        <FieldShell ctx={ctx} pointer="/at" label="At" required help="In your browser's time zone.">
          <input
            type="datetime-local"
            {...describedBy(ctx, '/at', true)}
            required
            value={value.at}
            onInput={(e) => set({ at: e.currentTarget.value })}
          />
        </FieldShell>
      )}
    </>
  );
}

/** The schedule's timing as the API takes it. */
export function whenBody(when: When): Pick<CreateSchedule, 'at' | 'cron' | 'timezone'> {
  if (when.repeat) return { cron: when.cron, timezone: when.timezone || 'UTC' };
  const at = new Date(when.at);
  return { at: Number.isNaN(at.getTime()) ? when.at : at.toISOString() };
}
