import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
let lastMs = 0;
let sequence = 0;

/**
 * Operation ids sort by creation time (`op_` + 10 chars of time + a 4-char
 * sequence + 8 random chars), so "newest first" and cursors are a plain ORDER BY id.
 */
export function newOperationId(nowMs: number): string {
  return sortableId('op_', nowMs);
}

/** Schedule ids (`sch_` + the same time-sorted tail), so a listing by id is in creation order. */
export function newScheduleId(nowMs: number): string {
  return sortableId('sch_', nowMs);
}

/** Webhook ids (`wh_` + the same time-sorted tail). */
export function newWebhookId(nowMs: number): string {
  return sortableId('wh_', nowMs);
}

function sortableId(prefix: string, nowMs: number): string {
  if (nowMs <= lastMs) {
    sequence += 1;
  } else {
    lastMs = nowMs;
    sequence = 0;
  }
  return `${prefix}${encode(lastMs, 10)}${encode(sequence, 4)}${randomChars(8)}`;
}

/** A random id for a worker's leases. */
export function newWorkerId(): string {
  return `w_${randomChars(12)}`;
}

function encode(value: number, length: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < length; i += 1) {
    out = ALPHABET[rest % 32] + out;
    rest = Math.floor(rest / 32);
  }
  return out;
}

/** Random bytes drawn in blocks: one call into the crypto library per 512 ids, not one per id. */
const pool = Buffer.alloc(4096);
let pooled = pool.length;

function randomChars(length: number): string {
  if (pooled + length > pool.length) {
    randomFillSync(pool);
    pooled = 0;
  }
  let out = '';
  for (let i = 0; i < length; i += 1) out += ALPHABET[pool[pooled + i]! % 32];
  pooled += length;
  return out;
}
