import { isDeepStrictEqual } from 'node:util';

import { type PlanInput, type PlanResult, ValidationError } from '../../src/sdk/index.js';
import { createDataDirectoryPolicy, type DataDirectoryPolicy } from './data-directory.js';
import { ADMIN_PASSWORD_BINDINGS, type ServerConfigs, type ServerOutput } from './schema.js';
import type { TargetPolicy } from './targets.js';

/** The one step of create and update: connect and read the version. Delete has none. */
export type ServerStep = 'connect';

/** STEWARD_POSTGRES_DATA_DIRS' default: every data_directory is refused. */
const NO_DATA_DIRECTORIES = createDataDirectoryPolicy();

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
  input: PlanInput<ServerConfigs, ServerOutput, ServerData>,
  dataDirectories: Pick<DataDirectoryPolicy, 'refusal'> = NO_DATA_DIRECTORIES,
): PlanResult<ServerConfigs, ServerOutput, ServerData> {
  const { action, current, desired } = input;
  // An import is planned as a create whose desired state says `import` (docs/modules.md).
  const asked = desired.state.action === 'import' ? 'import' : action;
  if (action !== 'delete') checkWhere(policy, dataDirectories, asked, desired.spec.configs);
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

/**
 * host and data_directory are checked against the operator's lists before anything is read or
 * connected to. Only an import (or a refresh of one, whose host observe filled in) may leave host
 * out, since only observe can find it from the data directory; a create or update must name it.
 */
function checkWhere(
  policy: Pick<TargetPolicy, 'refusal'>,
  dataDirectories: Pick<DataDirectoryPolicy, 'refusal'>,
  action: string,
  { host, data_directory: dataDirectory }: ServerConfigs,
): void {
  const refuse = (field: string, message: string): never => {
    throw new ValidationError(message, {
      problems: [{ path: `/spec/configs/${field}`, message }],
    });
  };
  if (host === undefined && action !== 'import' && action !== 'refresh')
    refuse('host', 'host is required (only an import by data_directory may leave it out)');
  const hostRefused = host === undefined ? undefined : policy.refusal(host);
  if (hostRefused) refuse('host', hostRefused);
  const dirRefused =
    dataDirectory === undefined ? undefined : dataDirectories.refusal(dataDirectory);
  if (dirRefused) refuse('data_directory', dirRefused);
}
