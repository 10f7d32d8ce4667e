import { isLoopback } from './api/auth/access-control.js';
import type { CoreLogger } from './core/logging.js';
import type { Registry } from './core/modules/registry.js';
import type { ResourceSecrets } from './core/secrets/sealed-resources.js';

/* What a Steward says once it has started (steward.ts `start`): the warnings an operator must see. */

/** Whether writeOnly values are sealed at rest: which key, or a warning when kinds have secrets and there is no key. */
export function reportSecretsAtRest(
  logger: CoreLogger,
  registry: Registry,
  secrets: ResourceSecrets,
): void {
  const { keyId, previousKeyIds } = secrets;
  if (keyId) {
    logger.info('secrets are sealed at rest', { keyId, previousKeyIds });
    return;
  }
  const kinds = registry
    .all()
    .filter((module) => module.hasSecretConfigs || module.hasSecretOutput)
    .map((module) => module.definition.kind);
  if (kinds.length) {
    logger.warn(
      'secrets are stored unencrypted: no STEWARD_SECRET_KEY, so the writeOnly configs and outputs of these kinds are plaintext in the database',
      {
        kinds,
        setting: 'STEWARD_SECRET_KEY',
        guide: 'docs/security.md',
      },
    );
  }
}

/** Open mode is for one machine: say so at every start, and loudly when the API is reachable from others. */
export function warnOpen(logger: CoreLogger, host: string): void {
  const fields = { host, setting: 'STEWARD_TOKENS_FILE', guide: 'docs/security.md' };
  if (isLoopback(host)) {
    logger.warn(
      'steward is open: no STEWARD_TOKENS_FILE, so every caller is an admin on every project; set STEWARD_TOKENS_FILE before exposing it beyond this machine',
      fields,
    );
  } else {
    logger.warn(
      'steward is open and listening beyond this machine: no STEWARD_TOKENS_FILE, so anyone who can reach this address is an admin on every project; set STEWARD_TOKENS_FILE',
      fields,
    );
  }
}
