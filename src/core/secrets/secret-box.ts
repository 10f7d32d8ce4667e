import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * The cipher of secrets at rest: AES-256-GCM with a fresh 12-byte IV per value,
 * and the place the value belongs to (its resource's URN and JSON pointer) as
 * additional authenticated data, so a sealed value opens only where it was sealed.
 *
 * A sealed value is one string:
 *
 *     $sealed:v1:<key id>:<iv base64>:<ciphertext base64>:<tag base64>
 *
 * The key id is the first 8 hex digits of the key's SHA-256 (domain-separated): it
 * says which key opens the value, and tells nothing about the key.
 */
export const SEALED_PREFIX = '$sealed:';
const V1 = `${SEALED_PREFIX}v1:`;
const ENVELOPE =
  /^\$sealed:v1:([0-9a-f]{8}):([A-Za-z0-9+/]{16}):([A-Za-z0-9+/]*={0,2}):([A-Za-z0-9+/]{22}==)$/;
const KEY_BYTES = 32;
const IV_BYTES = 12;

/** Why a sealed value could not be opened; the message names the key id, never the value. */
export type UnreadableReason = 'unknown_key' | 'altered' | 'malformed';

export class UnreadableSecretError extends Error {
  override readonly name = 'UnreadableSecretError';
  constructor(
    readonly reason: UnreadableReason,
    readonly keyId: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

export interface SecretBox {
  /** The id of STEWARD_SECRET_KEY; undefined without one (values are then stored as they are). */
  readonly keyId: string | undefined;
  /** The ids of STEWARD_SECRET_KEYS_PREVIOUS, still accepted to open values. */
  readonly previousKeyIds: readonly string[];
  /** Seals with the current key; throws without one (callers check `keyId`). */
  seal(plaintext: string, place: string): string;
  /** Opens a sealed value sealed for `place`; throws UnreadableSecretError. */
  open(sealed: string, place: string): string;
}

/** True for a string that has the shape of a sealed value (or claims to: the prefix is reserved). */
export function isSealed(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(SEALED_PREFIX);
}

/** The key id a sealed value names, if it is well-formed. */
export function sealedKeyId(sealed: string): string | undefined {
  return ENVELOPE.exec(sealed)?.[1];
}

/**
 * Parses a key as STEWARD_SECRET_KEY gives it: 32 bytes in base64 (44 characters with
 * the padding, as `openssl rand -base64 32` prints it). The error never repeats the value.
 */
export function parseSecretKey(text: string): Buffer {
  const trimmed = text.trim();
  const hint =
    'must be 32 random bytes in base64, 44 characters (make one with: openssl rand -base64 32)';
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) || trimmed.length % 4 === 1)
    throw new Error(`${hint}; the value given is not base64`);
  const key = Buffer.from(trimmed, 'base64');
  if (key.length !== KEY_BYTES)
    throw new Error(`${hint}; the value given decodes to ${key.length} bytes`);
  if (key.toString('base64').replace(/=+$/, '') !== trimmed.replace(/=+$/, ''))
    throw new Error(`${hint}; the value given is not canonical base64`);
  return key;
}

export function keyIdOf(key: Buffer): string {
  return createHash('sha256')
    .update('steward secret key id\0')
    .update(key)
    .digest('hex')
    .slice(0, 8);
}

/**
 * The box over the configured keys (base64, as in the configuration). Without a
 * current key it seals nothing, and opens with the previous keys only.
 */
export function createSecretBox(
  current: string | undefined,
  previous: readonly string[] = [],
): SecretBox {
  const currentKey = current === undefined ? undefined : parseSecretKey(current);
  const keys = new Map<string, Buffer[]>();
  const add = (key: Buffer) => keys.set(keyIdOf(key), [...(keys.get(keyIdOf(key)) ?? []), key]);
  if (currentKey) add(currentKey);
  for (const [i, text] of previous.entries()) {
    try {
      add(parseSecretKey(text));
    } catch (err) {
      throw new Error(`key ${i + 1} of STEWARD_SECRET_KEYS_PREVIOUS ${(err as Error).message}`);
    }
  }
  const keyId = currentKey && keyIdOf(currentKey);
  const previousKeyIds = [...keys.keys()].filter((id) => id !== keyId);

  return {
    keyId,
    previousKeyIds,
    seal(plaintext, place) {
      if (!currentKey || !keyId) throw new Error('no STEWARD_SECRET_KEY to seal with');
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', currentKey, iv);
      cipher.setAAD(Buffer.from(place, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `${V1}${keyId}:${iv.toString('base64')}:${ciphertext.toString('base64')}:${cipher.getAuthTag().toString('base64')}`;
    },
    open(sealed, place) {
      const parts = ENVELOPE.exec(sealed);
      if (!parts)
        throw new UnreadableSecretError(
          'malformed',
          undefined,
          'it is not a well-formed sealed value',
        );
      const [, id, iv, ciphertext, tag] = parts as unknown as [
        string,
        string,
        string,
        string,
        string,
      ];
      const candidates = keys.get(id);
      if (!candidates) {
        const known = keyId
          ? 'which is neither STEWARD_SECRET_KEY nor in STEWARD_SECRET_KEYS_PREVIOUS'
          : 'and STEWARD_SECRET_KEY is not set';
        throw new UnreadableSecretError('unknown_key', id, `it is sealed with key ${id}, ${known}`);
      }
      for (const key of candidates) {
        try {
          const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
          decipher.setAAD(Buffer.from(place, 'utf8'));
          decipher.setAuthTag(Buffer.from(tag, 'base64'));
          return Buffer.concat([
            decipher.update(Buffer.from(ciphertext, 'base64')),
            decipher.final(),
          ]).toString('utf8');
        } catch {
          // the next key with the same id, if any
        }
      }
      throw new UnreadableSecretError(
        'altered',
        id,
        `it does not open with key ${id}: it was altered, or it was sealed for another resource or field`,
      );
    },
  };
}
