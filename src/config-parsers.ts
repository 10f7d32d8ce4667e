import { isIP } from 'node:net';

import { envEntryProblem } from '../modules/child-process/env-allow-list.js';
import { dataDirEntryProblem } from '../modules/postgres-server/data-directory.js';
import { targetEntryProblem } from '../modules/postgres-server/targets.js';
import { parseSecretKey } from './core/secrets/secret-box.js';

/** The value parsers of src/config.ts, one per kind of setting. */

/** Reads one setting's raw text; throws an Error saying what the value must be (never repeating a secret). */
export type Parser = (raw: string) => unknown;

export const integer =
  (min: number, max = Number.MAX_SAFE_INTEGER): Parser =>
  (raw) => {
    const value = Number(raw);
    if (!/^-?\d+$/.test(raw.trim()) || value < min || value > max)
      throw new Error(`must be a whole number from ${min} to ${max}`);
    return value;
  };
export const number =
  (min: number): Parser =>
  (raw) => {
    const value = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(value) || value < min)
      throw new Error(`must be a number of at least ${min}`);
    return value;
  };
export const share: Parser = (raw) => {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value <= 0 || value > 1)
    throw new Error('must be a number above 0 and at most 1');
  return value;
};
export const text: Parser = (raw) => {
  if (raw.trim() === '') throw new Error('must not be empty');
  return raw;
};
export const boolean: Parser = (raw) => {
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new Error('must be true or false');
};
/** `auto`, or what `boolean` reads. */
export const autoOrBoolean: Parser = (raw) => {
  if (raw === 'auto') return 'auto';
  try {
    return boolean(raw);
  } catch {
    throw new Error('must be auto, true or false');
  }
};
export const oneOf =
  (...values: string[]): Parser =>
  (raw) => {
    if (!values.includes(raw)) throw new Error(`must be one of ${values.join(', ')}`);
    return raw;
  };
/** A key is checked here, so a bad one stops start-up with the reason (never the value). */
export const secretKey: Parser = (raw) => {
  parseSecretKey(raw);
  return raw.trim();
};
export const secretKeyList: Parser = (raw) => {
  const keys = commaList(raw) as string[];
  keys.forEach((key, i) => {
    try {
      parseSecretKey(key);
    } catch (err) {
      throw new Error(`key ${i + 1}: ${(err as Error).message}`);
    }
  });
  return keys;
};
export const pathList: Parser = (raw) => raw.split(':').filter((entry) => entry.trim() !== '');
export const commaList: Parser = (raw) =>
  raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
/** Each entry is checked here, so a typo stops start-up instead of refusing every resource. */
export const envAllowList: Parser = (raw) => {
  const entries = commaList(raw) as string[];
  const problems = entries.map(envEntryProblem).filter((problem) => problem !== undefined);
  if (problems.length) throw new Error(`has bad entries: ${problems.join('; ')}`);
  return entries;
};

/** Absolute directories only: a relative one would depend on where Steward was started. */
export const absoluteDirList: Parser = (raw) => {
  const entries = commaList(raw) as string[];
  const bad = entries.filter((entry) => !entry.startsWith('/'));
  if (bad.length) throw new Error(`must be absolute paths: ${bad.map((e) => `"${e}"`).join(', ')}`);
  return entries;
};

export const postgresTargetList: Parser = (raw) => {
  const entries = commaList(raw) as string[];
  if (entries.length === 0) throw new Error('must name at least one target');
  const problems = entries.flatMap((entry) => {
    const problem = targetEntryProblem(entry);
    return problem ? [`"${entry}" ${problem}`] : [];
  });
  if (problems.length) throw new Error(problems.join('; '));
  return entries;
};

/** Host names, IP addresses and CIDRs (STEWARD_WEBHOOK_ALLOW), each checked here so a typo stops start-up. */
export const webhookAllowList: Parser = (raw) => {
  const entries = commaList(raw) as string[];
  const bad = entries.filter((entry) => {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address ?? '');
    if (bits === undefined) return family === 0 && !/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(entry);
    const max = family === 4 ? 32 : 128;
    return family === 0 || extra !== undefined || !/^\d+$/.test(bits) || Number(bits) > max;
  });
  if (bad.length)
    throw new Error(
      `must be host names, IP addresses or CIDRs: ${bad.map((e) => `"${e}"`).join(', ')}`,
    );
  return entries;
};

/** Absolute directories, each checked here so a typo stops start-up; empty = none allowed. */
export const postgresDataDirList: Parser = (raw) => {
  const entries = commaList(raw) as string[];
  const problems = entries.flatMap((entry) => {
    const problem = dataDirEntryProblem(entry);
    return problem ? [`"${entry}" ${problem}`] : [];
  });
  if (problems.length) throw new Error(problems.join('; '));
  return entries;
};
