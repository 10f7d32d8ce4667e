import type { NewSchedule, ScheduleCommands } from '../../core/schedules/schedule-commands.js';
import { noteAudit } from '../auth/audit.js';
import { authorizeResource, NEEDS, requireRole } from '../auth/authorize.js';
import { callerOf } from '../auth/caller.js';
import { API_PREFIX } from '../prefix.js';
import { parseNameFilter, parsePageSize, parseUrnFilter, queryOf } from '../request-parsing.js';
import { RouteTable } from '../route-table.js';
import type { BodyValidator } from '../schemas.js';
import { sendPage } from '../send-page.js';

/**
 * Schedules (docs/design.md §10). Making or deleting one needs what its request needs (editor);
 * one outside the caller's projects answers as a missing one does.
 */
export function scheduleRoutes(schedules: ScheduleCommands, schemas: BodyValidator): RouteTable {
  const routes = new RouteTable();

  routes.post('/resources/:urn/schedules', async (req, res) => {
    queryOf(req, []);
    const caller = authorizeResource(res, req.params.urn, NEEDS.change, 'schedule requests');
    const body = schemas.assert<NewSchedule>('create-schedule.json', req.body);
    noteAudit(res, { moduleAction: body.request?.action ?? 'delete' });
    const schedule = await schedules.create(req.params.urn, body, caller.name);
    res.setHeader('Location', `${API_PREFIX}/schedules/${schedule.id}`);
    res.status(201).json(schedule);
  });

  routes.get('/resources/:urn/schedules', async (req, res) => {
    const q = queryOf(req, ['page_size', 'page_token']);
    const caller = authorizeResource(res, req.params.urn, NEEDS.read, 'read schedules');
    const page = await schedules.listOfResource(
      req.params.urn,
      parsePageSize(q.page_size),
      q.page_token,
      caller.scope,
    );
    sendPage(res, 'schedules', page);
  });

  routes.get('/schedules', async (req, res) => {
    const q = queryOf(req, ['project', 'urn', 'page_size', 'page_token']);
    const page = await schedules.list(
      { project: parseNameFilter('project', q.project), urn: parseUrnFilter(q.urn) },
      parsePageSize(q.page_size),
      q.page_token,
      callerOf(res).scope,
    );
    sendPage(res, 'schedules', page);
  });

  routes.get('/schedules/:id', async (req, res) => {
    queryOf(req, []);
    res.json(await schedules.get(req.params.id, callerOf(res).scope));
  });

  routes.delete('/schedules/:id', async (req, res) => {
    queryOf(req, []);
    const caller = callerOf(res);
    // Outside the caller's projects it is a 404 whatever the role; inside, a viewer gets 403.
    const schedule = await schedules.get(req.params.id, caller.scope);
    noteAudit(res, { urn: schedule.urn });
    requireRole(caller, NEEDS.change, 'delete schedules');
    await schedules.remove(req.params.id, caller.scope);
    res.status(204).end();
  });

  return routes;
}
