const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether JSON text nests deeper than `levels`, read from its UTF-8 bytes without
 * parsing it: brackets count outside strings only, and a string's escapes are skipped.
 * (No byte of a multi-byte UTF-8 character is ASCII, so a byte scan is exact.) It
 * stops at the first level too many, so 1 MiB of `[` costs microseconds, where
 * JSON.parse of it holds the event loop for a quarter of a second.
 */
export function nestsDeeperThan(bytes: Uint8Array, levels: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i += 1) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i += 1;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
      depth += 1;
      if (depth > levels) return true;
    } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) {
      depth -= 1;
    }
  }
  return false;
}
