import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Command } from 'commander';

import { CliError, EXIT } from './cli-error.js';
import { type DevChild, startDevChild } from './dev-child.js';

const ENTRIES = ['index.js', 'index.mjs', 'index.cjs', 'index.ts'];
/** Changes under these (top-level) names do not restart: Steward's own database, dependencies, caches. */
const IGNORED = new Set(['.steward', 'node_modules', '.git', '__pycache__']);
const DEBOUNCE_MS = 300;
const CLI = fileURLToPath(new URL('../cli.js', import.meta.url));

/**
 * `steward module dev PATH`: `steward serve` as a child process with the module in
 * PATH loaded (a Python `server.py` is started too, as an HTTP module), restarted
 * when a file in PATH changes. The SQLite database in PATH/.steward/ keeps the
 * resources across restarts. Ctrl-C stops everything.
 */
export function registerModuleDevCommand(moduleCommand: Command): void {
  moduleCommand
    .command('dev <path>')
    .description(
      'run Steward with the module in <path> (database in <path>/.steward/), restarting it when a file there changes; Ctrl-C stops',
    )
    .option('--port <port>', 'where Steward listens (default: $STEWARD_PORT, else 8080)')
    .action((path: string, options: { port?: string }) => runDev(path, options.port));
}

async function runDev(path: string, port: string | undefined): Promise<never> {
  const folder = resolve(path);
  if (!existsSync(folder) || !statSync(folder).isDirectory())
    throw new CliError(`${folder} is not a folder`, EXIT.usage);
  const python = !ENTRIES.some((f) => existsSync(join(folder, f)));
  if (python && !existsSync(join(folder, 'server.py')))
    throw new CliError(`${folder} has no ${ENTRIES.join(', ')}, nor server.py`, EXIT.usage);
  const stateDir = join(folder, '.steward');
  mkdirSync(stateDir, { recursive: true });
  const db = join(stateDir, 'steward.db');
  // STEWARD_MODULE_PATHS names folders of module folders: one holding a link to this one.
  const modulesDir = python ? undefined : mkdtempSync(join(tmpdir(), 'steward-dev-'));
  if (modulesDir) symlinkSync(folder, join(modulesDir, 'module'), 'dir');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    STEWARD_DB: db,
    STEWARD_MODULE_PATHS: modulesDir ?? '',
    STEWARD_PORT: port ?? process.env.STEWARD_PORT ?? '8080',
  };
  const say = (text: string) => process.stdout.write(`steward module dev: ${text}\n`);
  let children: DevChild[] = [];
  let stopping = false;

  const stopAll = async () => {
    const stopped = children.reverse(); // Steward first, then the module it calls
    children = [];
    for (const child of stopped) await child.stop();
  };
  const start = async (): Promise<string | undefined> => {
    try {
      let stewardEnv = env;
      if (python) {
        const server = await startDevChild(
          'python3',
          [join(folder, 'server.py'), '--port', '0'],
          process.env,
          (line) => /listening on (https?:\/\/\S+)/.exec(line)?.[1],
        );
        children.push(server);
        stewardEnv = { ...env, STEWARD_HTTP_MODULES: server.ready };
      }
      const steward = await startDevChild(process.execPath, [CLI, 'serve'], stewardEnv, urlOf);
      children.push(steward);
      steward.proc.once('exit', (code) => {
        if (!stopping && children.includes(steward))
          say(`Steward exited (code ${code}); the next change restarts it`);
      });
      return steward.ready;
    } catch (err) {
      await stopAll();
      say(`${(err as Error).message}; the next change restarts it`);
      return undefined;
    }
  };

  const changed = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let queued = false;
  let restarts = 0;
  let running: Promise<void> = Promise.resolve();
  const restart = async () => {
    queued = false;
    if (stopping) return;
    const files = [...changed].sort().join(', ');
    changed.clear();
    await stopAll();
    const url = await start();
    restarts += 1;
    if (url) say(`${files} changed: restart ${restarts}, serving on ${url}`);
  };
  const watcher = watch(folder, { recursive: true }, (_event, filename) => {
    if (!filename || stopping || IGNORED.has(filename.toString().split(sep)[0]!)) return;
    changed.add(filename.toString());
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (queued) return;
      queued = true;
      running = running.then(restart);
    }, DEBOUNCE_MS);
  });
  watcher.on('error', (err) => say(`watching ${folder} failed: ${err.message}`));

  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    clearTimeout(timer);
    watcher.close();
    say(`${signal}: stopping`);
    void running.then(stopAll).finally(() => {
      if (modulesDir) rmSync(modulesDir, { recursive: true, force: true });
      process.exit(EXIT.ok);
    });
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  say(`module ${folder}${python ? ' (server.py, an HTTP module)' : ''}, database ${db}`);
  running = start().then((url) => {
    if (url) say(`serving on ${url}; watching ${folder} for changes, Ctrl-C stops`);
  });
  return new Promise<never>(() => {}); // until a signal
}

/** The address in Steward's "steward started" log line. */
function urlOf(line: string): string | undefined {
  if (!line.includes('"steward started"')) return undefined;
  try {
    const { host, port } = JSON.parse(line) as { host: string; port: number };
    return `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${port}`;
  } catch {
    return undefined;
  }
}
