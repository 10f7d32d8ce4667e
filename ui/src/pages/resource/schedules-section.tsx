import { api } from '../../api/client.js';
import { useLoaded } from '../../api/use-loaded.js';
import { ErrorBanner } from '../../components/error-banner.js';
import { TableScroll } from '../../components/table-scroll.js';
import { when } from '../../format.js';

/** The resource's schedules (making one is a form of the actions component). */
export function SchedulesSection({ urn, changes }: { urn: string; changes: number }) {
  const { data, error } = useLoaded(
    (signal) =>
      api.GET('/api/v1beta1/resources/{urn}/schedules', {
        params: { path: { urn }, query: { page_size: 100 } },
        signal,
      }),
    [urn, changes],
  );
  const schedules = data?.schedules;
  return (
    <section aria-labelledby="schedules-title" class="panel">
      <h2 id="schedules-title">Schedules</h2>
      <ErrorBanner error={error} title="The schedules could not be read" />
      {schedules === undefined ? (
        error ? null : (
          <p class="loading">Loading…</p>
        )
      ) : schedules.length === 0 ? (
        <p>No schedules.</p>
      ) : (
        <TableScroll label="Schedules of this resource">
          <table>
            <caption class="visually-hidden">Schedules of this resource</caption>
            <thead>
              <tr>
                <th scope="col">Request</th>
                <th scope="col">When</th>
                <th scope="col">Next run</th>
                <th scope="col">Last run</th>
                <th scope="col">By</th>
              </tr>
            </thead>
            <tbody>
              {schedules.map((schedule) => (
                <tr key={schedule.id}>
                  <th scope="row">{schedule.request.action}</th>
                  <td>
                    {schedule.cron
                      ? `cron ${schedule.cron} (${schedule.timezone})`
                      : `once at ${when(schedule.at)}`}
                  </td>
                  <td>{schedule.next_run_at ? when(schedule.next_run_at) : 'none'}</td>
                  <td>
                    {schedule.last_outcome
                      ? `${schedule.last_outcome} ${when(schedule.last_run_at)}`
                      : 'not yet'}
                    {schedule.last_error ? (
                      <div class="last-error">{schedule.last_error}</div>
                    ) : null}
                  </td>
                  <td>{schedule.created_by}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </section>
  );
}
