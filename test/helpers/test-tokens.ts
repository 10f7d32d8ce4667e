import { join } from 'node:path';

import { generateToken, hashToken, writeTokensFile } from '../../src/api/auth/tokens-file.js';

/** A role and the projects it is granted on, per token name. */
export type Grants = Readonly<
  Record<string, { role: 'viewer' | 'editor' | 'admin'; projects: readonly string[] }>
>;

/**
 * A tokens file in `dir` holding one fresh token per grant; returns the file and each
 * token's secret by name (what a test sends as `Authorization: Bearer …`).
 */
export function writeTestTokens<G extends Grants>(
  dir: string,
  grants: G,
): { tokensFile: string; secrets: Record<keyof G, string> } {
  const tokensFile = join(dir, 'tokens.json');
  const secrets = Object.fromEntries(
    Object.keys(grants).map((name) => [name, generateToken()]),
  ) as Record<keyof G, string>;
  writeTokensFile(
    tokensFile,
    Object.entries(grants).map(([name, grant]) => ({
      name,
      role: grant.role,
      projects: [...grant.projects],
      sha256: hashToken(secrets[name as keyof G]),
    })),
  );
  return { tokensFile, secrets };
}
