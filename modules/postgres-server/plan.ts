import { isDeepStrictEqual } from 'node:util';

import { type PlanInput, type PlanResult, ValidationError } from '../../src/sdk/index.js';
import { ADMIN_PASSWORD_BINDINGS, type ServerConfigs, type ServerOutput } from './schema.js';
import type { TargetPolicy } from './targets.js';

/** The one step of create and update: connect and read the version. Delete has none. */
export type ServerStep = 'connect';

export interface ServerData {
  pending: ServerStep[];
}

/**
 * Pure. An update that leaves `admin_password` out keeps the stored one: the API never
 * shows it, so a client that PATCHes the configs it read back cannot resend it. The core
 * has already put it back and refused a change of where it goes (ADMIN_PASSWORD_BINDINGS);
 * plan checks that again, so the kept password never goes to a host its writer did not choose.
 */
export function planServer(
  policy: Pick<TargetPolicy, 'refusal'>,
  { action, current, desired }: PlanInput<ServerConfigs, ServerOutput, ServerData>,
): PlanResult<ServerConfigs, ServerOutput, ServerData> {
  const host = desired.spec.configs.host;
  const refused = action === 'delete' ? undefined : policy.refusal(host);
  if (refused)
    throw new ValidationError(refused, {
      problems: [{ path: '/spec/configs/host', message: refused }],
    });
  switch (action) {
    case 'create':
      return { data: { pending: ['connect'] } };
    case 'update': {
      const configs = desired.spec.configs;
      const stored = current?.spec.configs.admin_password;
      const sameTarget = ADMIN_PASSWORD_BINDINGS.admin_password.every((field) =>
        isDeepStrictEqual(current?.spec.configs[field], configs[field]),
      );
      const keep = configs.admin_password === undefined && stored !== undefined;
      if (keep && !sameTarget) {
        throw new ValidationError(
          'admin_password must be sent again when host, port, admin_user or sslmode change',
          {
            problems: [
              {
                path: '/spec/configs/admin_password',
                message: 'is required when host, port, admin_user or sslmode change',
              },
            ],
          },
        );
      }
      return {
        ...(keep ? { configs: { ...configs, admin_password: stored } } : {}),
        data: { pending: ['connect'] },
      };
    }
    case 'delete':
      return { data: { pending: [] } };
    case 'import':
    case 'refresh':
      // The core calls observe for these; nothing to plan.
      return {};
    default:
      throw new ValidationError(`postgres_server has no action "${action}"`);
  }
}
