import * as crypto from 'node:crypto';
import {
  chmodSync,
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';

import { isPlainObject } from '../../core/json.js';
import { NAME_PATTERN } from '../../core/names.js';
import { type Role, ROLES } from './caller.js';

/**
 * The tokens file (STEWARD_TOKENS_FILE):
 *
 * ```json
 * {"tokens": [{"name": "ci", "role": "editor", "projects": ["web"], "sha256": "<64 hex digits>"}]}
 * ```
 *
 * Only SHA-256 hashes are stored. A token is 32 random bytes, so a fast hash is as
 * good as a slow one: nothing short of 2^256 guesses finds a preimage, and there is
 * no dictionary to run against it (docs/security.md).
 */
export interface TokenEntry {
  name: string;
  role: Role;
  /** Project names, or `["*"]` for every project. */
  projects: string[];
  sha256: string;
  /** When `steward token create` made it (informational). */
  created_at?: string;
}

/** Token names are what created_by records: short, printable, and not the placeholders of the audit log. */
export const TOKEN_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,62}$/;
export const RESERVED_NAMES = ['anonymous', 'unknown'];
const ENTRY_KEYS = ['name', 'role', 'projects', 'sha256', 'created_at'];
const TOKEN_PREFIX = 'stw_';

/** `stw_` + 32 random bytes, base64url: 256 bits, and greppable in a leaked log or repository. */
export function generateToken(): string {
  return `${TOKEN_PREFIX}${crypto.randomBytes(32).toString('base64url')}`;
}

/**
 * The token's SHA-256, hex. Every request with a token hashes it: Node's one-shot `crypto.hash`
 * (20.12 and later) takes a third of `createHash`'s time, which was 7 % of a GET's CPU with
 * tokens (docs/decisions.md, "Per-request costs, second round"); older Node 20 releases use the latter.
 */
export const hashToken: (token: string) => string =
  typeof (crypto as { hash?: unknown }).hash === 'function'
    ? (token) => crypto.hash('sha256', token, 'hex')
    : (token) => crypto.createHash('sha256').update(token, 'utf8').digest('hex');

/** Checks every entry; throws one error listing every problem. */
function parseTokensFile(text: string): TokenEntry[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`not valid JSON: ${(err as Error).message}`);
  }
  if (!isPlainObject(parsed) || !Array.isArray(parsed.tokens))
    throw new Error('must hold {"tokens": [...]}');
  const unknownTop = Object.keys(parsed).filter((key) => key !== 'tokens');
  const problems: string[] = unknownTop.length ? [`unknown field(s) ${unknownTop.join(', ')}`] : [];
  const entries: TokenEntry[] = [];
  (parsed.tokens as unknown[]).forEach((raw, i) => {
    const at = `tokens[${i}]`;
    const found = entryProblems(raw);
    if (found.length) problems.push(...found.map((problem) => `${at}: ${problem}`));
    else entries.push(raw as unknown as TokenEntry);
  });
  const names = new Set<string>();
  const hashes = new Set<string>();
  for (const entry of entries) {
    if (names.has(entry.name)) problems.push(`two tokens are named ${entry.name}`);
    if (hashes.has(entry.sha256.toLowerCase()))
      problems.push(`token ${entry.name} has the hash of another token`);
    names.add(entry.name);
    hashes.add(entry.sha256.toLowerCase());
  }
  if (problems.length) throw new Error(problems.join('; '));
  return entries.map((entry) => ({
    ...entry,
    sha256: entry.sha256.toLowerCase(),
    projects: [...entry.projects],
  }));
}

function entryProblems(raw: unknown): string[] {
  if (!isPlainObject(raw)) return ['must be an object'];
  const problems: string[] = [];
  const unknown = Object.keys(raw).filter((key) => !ENTRY_KEYS.includes(key));
  if (unknown.length) problems.push(`unknown field(s) ${unknown.join(', ')}`);
  if (typeof raw.name !== 'string' || !TOKEN_NAME_PATTERN.test(raw.name))
    problems.push(`name must match ${TOKEN_NAME_PATTERN.source}`);
  else if (RESERVED_NAMES.includes(raw.name)) problems.push(`name "${raw.name}" is reserved`);
  if (!ROLES.includes(raw.role as Role)) problems.push(`role must be one of ${ROLES.join(', ')}`);
  problems.push(...projectProblems(raw.projects), ...grantProblems(raw.role, raw.projects));
  if (typeof raw.sha256 !== 'string' || !/^[0-9a-fA-F]{64}$/.test(raw.sha256))
    problems.push('sha256 must be 64 hex digits (the SHA-256 of the token)');
  if (raw.created_at !== undefined && typeof raw.created_at !== 'string')
    problems.push('created_at must be a string');
  return problems;
}

/** `["*"]`, or one or more distinct project names. */
export function projectProblems(projects: unknown): string[] {
  if (!Array.isArray(projects) || projects.length === 0)
    return ['projects must be a non-empty list of project names, or ["*"]'];
  if (projects.includes('*'))
    return projects.length === 1
      ? []
      : ['projects: "*" stands alone (it already means every project)'];
  const bad = projects.filter((p) => typeof p !== 'string' || !NAME_PATTERN.test(p));
  if (bad.length)
    return [
      `projects must match ${NAME_PATTERN.source}: ${bad.map((p) => JSON.stringify(p)).join(', ')}`,
    ];
  return new Set(projects).size === projects.length ? [] : ['projects lists a project twice'];
}

/** The metrics role counts every project (GET /metrics is not per project): it is granted on `["*"]` only. */
export function grantProblems(role: unknown, projects: unknown): string[] {
  const everyProject = Array.isArray(projects) && projects.length === 1 && projects[0] === '*';
  return role === 'metrics' && !everyProject
    ? ['the metrics role is granted on projects ["*"] only (/metrics counts every project)']
    : [];
}

/** Reads and checks the file; the error names the file. */
export function readTokensFile(file: string): TokenEntry[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(
      `STEWARD_TOKENS_FILE ${file} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  try {
    return parseTokensFile(text);
  } catch (err) {
    throw new Error(`STEWARD_TOKENS_FILE ${file} is invalid: ${(err as Error).message}`);
  }
}

/**
 * Replaces the file atomically (a temporary file in the same directory, fsync,
 * rename), readable by its owner only: a reader sees the old file or the new one.
 */
export function writeTokensFile(file: string, entries: readonly TokenEntry[]): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeSync(fd, `${JSON.stringify({ tokens: entries }, null, 2)}\n`);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(temporary, { force: true });
    throw err;
  }
  closeSync(fd);
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
}
