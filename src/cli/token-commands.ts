import { existsSync } from 'node:fs';

import type { Command } from 'commander';

import { type Role, ROLES } from '../api/auth/caller.js';
import {
  generateToken,
  grantProblems,
  hashToken,
  projectProblems,
  readTokensFile,
  RESERVED_NAMES,
  TOKEN_NAME_PATTERN,
  type TokenEntry,
  writeTokensFile,
} from '../api/auth/tokens-file.js';
import { CliError, EXIT } from './cli-error.js';
import { printerOf } from './context.js';
import { table } from './output.js';

interface FileOption {
  file?: string;
}

/**
 * `steward token create|list|revoke`: edit the tokens file (STEWARD_TOKENS_FILE,
 * or --file) on this machine. A running Steward sees the change within a second.
 * The file holds hashes only; `create` prints the token once.
 */
export function registerTokenCommands(program: Command): void {
  const token = program
    .command('token')
    .description('manage the API tokens in the tokens file (STEWARD_TOKENS_FILE or --file)');

  token
    .command('create')
    .description('make a token, print it once, and store its hash')
    .requiredOption('--name <name>', 'who the token is: created_by and the audit log record it')
    .requiredOption('--role <role>', `one of ${ROLES.join(', ')}`)
    .requiredOption('--projects <list>', "','-separated projects, or '*' for every project")
    .option('--file <path>', 'the tokens file (default: $STEWARD_TOKENS_FILE)')
    .action(
      async (
        options: FileOption & { name: string; role: string; projects: string },
        command: Command,
      ) => {
        const out = printerOf(command);
        const file = await tokensFileOf(options);
        const entry = newEntry(options);
        const entries = existsSync(file) ? readTokensFile(file) : [];
        if (entries.some((e) => e.name === entry.name)) {
          throw new CliError(
            `a token named ${entry.name} exists in ${file}; revoke it first, or choose another name`,
            EXIT.failure,
          );
        }
        const secret = generateToken();
        writeTokensFile(file, [
          ...entries,
          { ...entry, sha256: hashToken(secret), created_at: new Date().toISOString() },
        ]);
        if (out.format === 'json')
          out.json({ name: entry.name, role: entry.role, projects: entry.projects, token: secret });
        else out.line(secret);
        out.note(
          `token ${entry.name} (${entry.role} on ${entry.projects.join(',')}) added to ${file}. It is shown only this once: Steward keeps its hash.`,
        );
      },
    );

  token
    .command('list')
    .description('list the tokens: names, roles and projects (never the hashes)')
    .option('--file <path>', 'the tokens file (default: $STEWARD_TOKENS_FILE)')
    .action(async (options: FileOption, command: Command) => {
      const out = printerOf(command);
      const entries = readTokensFile(await tokensFileOf(options));
      const shown = entries.map(({ name, role, projects, created_at }) => ({
        name,
        role,
        projects,
        created_at: created_at ?? null,
      }));
      if (out.format === 'json') out.json({ tokens: shown });
      else
        out.line(
          table(
            ['NAME', 'ROLE', 'PROJECTS', 'CREATED'],
            shown.map((e) => [e.name, e.role, e.projects.join(','), e.created_at ?? '-']),
          ),
        );
    });

  token
    .command('revoke')
    .description('remove a token; a running Steward refuses it within a second')
    .requiredOption('--name <name>', 'the token to remove')
    .option('--file <path>', 'the tokens file (default: $STEWARD_TOKENS_FILE)')
    .action(async (options: FileOption & { name: string }, command: Command) => {
      const out = printerOf(command);
      const file = await tokensFileOf(options);
      const entries = readTokensFile(file);
      const kept = entries.filter((e) => e.name !== options.name);
      if (kept.length === entries.length)
        throw new CliError(`no token named ${options.name} in ${file}`, EXIT.failure);
      writeTokensFile(file, kept);
      if (out.format === 'json') out.json({ revoked: options.name });
      else out.line(`token ${options.name} revoked`);
    });
}

/** --file, else STEWARD_TOKENS_FILE (from the environment or STEWARD_CONFIG_FILE, as `serve` reads it). */
async function tokensFileOf(options: FileOption): Promise<string> {
  if (options.file) return options.file;
  const { loadConfig } = await import('../config.js');
  const file = loadConfig().tokensFile;
  if (!file)
    throw new CliError('no tokens file: pass --file PATH or set STEWARD_TOKENS_FILE', EXIT.usage);
  return file;
}

function newEntry(options: {
  name: string;
  role: string;
  projects: string;
}): Omit<TokenEntry, 'sha256'> {
  if (!TOKEN_NAME_PATTERN.test(options.name) || RESERVED_NAMES.includes(options.name)) {
    throw new CliError(
      `--name must match ${TOKEN_NAME_PATTERN.source} and not be anonymous or unknown`,
      EXIT.usage,
    );
  }
  if (!ROLES.includes(options.role as Role))
    throw new CliError(
      `--role must be one of ${ROLES.join(', ')}, not "${options.role}"`,
      EXIT.usage,
    );
  const projects = options.projects
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  const problems = [...projectProblems(projects), ...grantProblems(options.role, projects)];
  if (problems.length) throw new CliError(`--projects: ${problems.join('; ')}`, EXIT.usage);
  return { name: options.name, role: options.role as Role, projects };
}
