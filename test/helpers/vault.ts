import { createHash, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';

import { keyIdOf, parseSecretKey } from '../../src/core/secrets/secret-box.js';

/** The modules `vault` and `vault_client` (test/fixtures/secret-modules), for STEWARD_MODULE_PATHS. */
export const SECRET_MODULES = fileURLToPath(new URL('../fixtures/secret-modules', import.meta.url));

/** What the vault module publishes for a secret it was handed: its digest. */
export function digest(value: string): string {
  return createHash('sha256').update(`digest:${value}`).digest('hex');
}

/** The secret token output the vault derives from its password (as the module does). */
export function tokenFor(password: string): string {
  return `tok_${createHash('sha256').update(`token:${password}`).digest('hex').slice(0, 40)}`;
}

/** A fresh STEWARD_SECRET_KEY. */
export function newSecretKey(): string {
  return randomBytes(32).toString('base64');
}

export function keyIdFor(key: string): string {
  return keyIdOf(parseSecretKey(key));
}

/**
 * The ways a secret could show up in a text: as it is, JSON-escaped, percent-encoded
 * (query strings, form bodies), hex, and base64 or base64url at each of the three
 * alignments it can have inside a longer encoded string.
 */
export function encodedForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const forms = new Set([
    secret,
    JSON.stringify(secret).slice(1, -1),
    encodeURIComponent(secret),
    bytes.toString('hex'),
  ]);
  for (const pad of [0, 1, 2]) {
    const padded = Buffer.concat([Buffer.alloc(pad), bytes]);
    // Drop the characters that also encode the padding, and the last (incomplete) group.
    const start = Math.ceil((pad * 4) / 3);
    const usable = Math.floor(padded.length / 3) * 4;
    for (const encoding of ['base64', 'base64url'] as const) {
      const text = padded.toString(encoding).slice(start, usable);
      if (text.length >= 8) forms.add(text);
    }
  }
  return [...forms];
}

/** Which forms of which secrets `text` holds ("<secret label> as <form>"). */
export function secretsIn(text: string, secrets: Record<string, string>): string[] {
  return Object.entries(secrets).flatMap(([label, secret]) =>
    encodedForms(secret)
      .filter((form) => text.includes(form))
      .map((form) => `${label} as ${form}`),
  );
}
