import type { Response } from 'express';

import type { CascadeAccepted } from '../../core/requests/cascade.js';
import type { Accepted } from '../../core/requests/command-types.js';
import type { ResourceCommands } from '../../core/requests/resource-commands.js';
import { noteAudit } from '../auth/audit.js';
import { authorizeResource, NEEDS } from '../auth/authorize.js';
import { settleKey } from '../idempotency.js';
import { API_PREFIX } from '../prefix.js';
import { queryOf } from '../request-parsing.js';
import type { RouteTable } from '../route-table.js';
import { dryRunAnswer } from './dry-run-answer.js';

/**
 * `POST /resources/{urn}/pause` and `/resume` (docs/design.md §11): 200, not 202, since nothing is
 * left to do; the operation (already succeeded) is the audit record, absent when the resource was
 * already in the state asked for and nothing was written.
 */
export function pauseRoutes(
  routes: RouteTable,
  commands: Pick<ResourceCommands, 'pause' | 'resume'>,
) {
  for (const verb of ['pause', 'resume'] as const) {
    routes.post(`/resources/:urn/${verb}`, async (req, res) => {
      queryOf(req, []);
      const caller = authorizeResource(res, req.params.urn, NEEDS.change, `${verb} resources`);
      const answer = await commands[verb](req.params.urn, caller.name);
      if (answer.operation) noteAudit(res, { operationId: answer.operation.id });
      res.setHeader('ETag', `"${answer.resource.version}"`);
      res.status(200).json(answer);
    });
  }
}

/**
 * A cascade's answer: the root's resource and operation at the top, like any delete, and the
 * dependents' deletes in `cascade`, in deletion order (leaves first). A dry run answers 200.
 */
export function sendCascade(res: Response, accepted: CascadeAccepted<Accepted>): void {
  const { root } = accepted;
  res.setHeader('ETag', `"${root.resource.version}"`);
  if (root.dryRun) {
    settleKey(res);
    res.status(200).json({
      ...dryRunAnswer(root),
      cascade: accepted.cascade.map(dryRunAnswer),
    });
    return;
  }
  const cascade = accepted.cascade.map(({ resource, operation }) => ({ resource, operation }));
  res.setHeader('Location', `${API_PREFIX}/operations/${root.operation.id}`);
  res.status(202).json({ resource: root.resource, operation: root.operation, cascade });
}
