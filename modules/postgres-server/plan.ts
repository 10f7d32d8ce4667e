import { ValidationError, type PlanInput, type PlanResult } from '../../src/sdk/index.js';

/** The one step of create and update: connect and read the version. Delete has none. */
export type ServerStep = 'connect';

export interface ServerData {
  pending: ServerStep[];
}

/**
 * Pure. An update that leaves `admin_password` out keeps the stored one: the API never
 * shows it, so a client that PATCHes the configs it read back cannot resend it.
 */
export function planServer({ action, current, desired }: PlanInput): PlanResult {
  switch (action) {
    case 'create':
      return { data: { pending: ['connect'] } satisfies ServerData };
    case 'update': {
      const configs = desired.spec.configs;
      const stored = current?.spec.configs.admin_password;
      const keep = configs.admin_password === undefined && stored !== undefined;
      return { ...(keep ? { configs: { ...configs, admin_password: stored } } : {}), data: { pending: ['connect'] } satisfies ServerData };
    }
    case 'delete':
      return { data: { pending: [] } satisfies ServerData };
    default:
      throw new ValidationError(`postgres_server has no action "${action}"`);
  }
}
