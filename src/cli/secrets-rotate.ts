import { builtinModules } from '../../modules/index.js';
import { loadConfig } from '../config.js';
import { loadModulesFromPaths } from '../core/modules/module-loader.js';
import { createRegistry } from '../core/modules/registry.js';
import { createResourceSecrets } from '../core/secrets/sealed-resources.js';
import { createSecretBox } from '../core/secrets/secret-box.js';
import {
  rotateSecrets,
  type RotationOptions,
  type RotationReport,
} from '../core/secrets/secret-rotation.js';
import { createStore } from '../store/create-store.js';
import { CliError, EXIT } from './cli-error.js';

/**
 * The server side of `steward secrets rotate`, loaded only when it runs: the
 * configuration's database, keys and modules (the modules say which values are
 * secrets, so plaintext ones from before the key can be found).
 */
export async function rotateWithConfiguration(options: RotationOptions): Promise<RotationReport> {
  const config = loadConfig();
  if (!config.secretKey)
    throw new CliError(
      'STEWARD_SECRET_KEY is not set: rotation seals every secret with it (docs/security.md)',
      EXIT.usage,
    );
  const registry = createRegistry([
    ...(await builtinModules(config)),
    ...(await loadModulesFromPaths(config.modulePaths)),
  ]);
  const box = createSecretBox(config.secretKey, config.secretKeysPrevious);
  const secrets = createResourceSecrets(box, (kind) => registry.find(kind)?.definition);
  const store = await createStore({
    db: config.db,
    busyTimeoutMs: config.dbBusyTimeoutMs,
    poolSize: config.dbPoolSize,
  });
  try {
    return await rotateSecrets({ store, registry, secrets, box }, options);
  } finally {
    await store.close();
  }
}
