import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** The compiled `steward` command. */
export const CLI = join(REPO, 'dist/src/cli.js');

/**
 * Builds dist/ when the compiled CLI is missing, older than a source of src/ or modules/, or
 * missing one of the chunks it loads (npm test builds first).
 */
export function ensureBuilt(): void {
  const newest = ['src', 'modules']
    .flatMap((top) =>
      readdirSync(join(REPO, top), { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
        .map((entry) => statSync(join(entry.parentPath, entry.name)).mtimeMs),
    )
    .reduce((a, b) => Math.max(a, b), 0);
  if (existsSync(CLI) && statSync(CLI).mtimeMs >= newest && chunksPresent(CLI)) return;
  // As `npm run build` makes it, the console aside: tsc's files, then the CLI bundled (in chunks).
  for (const [command, args] of [
    ['npx', ['tsc', '-p', 'tsconfig.build.json', '--noCheck']],
    [process.execPath, [join(REPO, 'scripts', 'bundle-cli.mjs')]],
  ] as const) {
    const build = spawnSync(command, args, { cwd: REPO, encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`build failed:\n${build.stdout}${build.stderr}`);
  }
}

/** Whether every chunk `file` imports (scripts/bundle-cli.mjs names them `cli-chunk-*.js`) is there, and theirs. */
function chunksPresent(file: string, seen = new Set<string>()): boolean {
  for (const [, name] of readFileSync(file, 'utf8').matchAll(
    /["']\.\/(cli-chunk-[\w-]+\.js)["']/g,
  )) {
    const chunk = join(dirname(file), name!);
    if (seen.has(chunk)) continue;
    seen.add(chunk);
    if (!existsSync(chunk) || !chunksPresent(chunk, seen)) return false;
  }
  return true;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `steward args…` to its end, with PATH and `env` only; `input`, when given, is its stdin. */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
  input?: string,
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    child.stdin?.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Live processes whose environment or arguments hold `mark` (what a test started, found without trusting it). */
export function processesMarked(mark: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      const seen =
        readFileSync(`/proc/${entry}/cmdline`, 'utf8') +
        readFileSync(`/proc/${entry}/environ`, 'utf8');
      if (seen.includes(mark)) found.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}
