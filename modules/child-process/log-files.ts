import { copyFile, type FileHandle, open, stat, truncate } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** One line of a log file and the file's modification time when it was read. */
export interface LogLine {
  text: string;
  mtime: Date;
}

/**
 * A line as its writer stamped it: NDJSON `{ts, line}` (log-stamper.mjs) or `{ts, stream, line}` (the
 * job wrapper). Any other line (one written before stamping, or by something else) is shown as it is,
 * at the file's modification time: when the file was last written, as near as can be known.
 */
export function stampedLine(line: LogLine): { ts: string; stream?: string; line: string } {
  if (line.text.startsWith('{')) {
    try {
      const parsed = JSON.parse(line.text) as { ts?: unknown; stream?: unknown; line?: unknown };
      if (typeof parsed.ts === 'string' && typeof parsed.line === 'string')
        return {
          ts: parsed.ts,
          line: parsed.line,
          ...(typeof parsed.stream === 'string' && { stream: parsed.stream }),
        };
    } catch {
      // not a stamped line: shown as it is
    }
  }
  return { ts: line.mtime.toISOString(), line: line.text };
}

const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

/** Waits `ms` between two polls of a followed log; false when the reader went away first. */
export async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

/** The one rotated file kept beside a log file. */
export const rotatedPath = (path: string): string => `${path}.1`;

/**
 * Copy-and-truncate rotation, for files a program writes through an O_APPEND
 * descriptor Steward cannot reopen: past `maxBytes`, the content is copied to
 * `<path>.1` (replacing the older one) and the file is emptied; the program
 * carries on writing at the new end. Lines written between the copy and the
 * truncation are lost.
 */
export async function rotateByCopy(path: string, maxBytes: number): Promise<boolean> {
  const size = await stat(path).then(
    (info) => info.size,
    () => 0,
  );
  if (size <= maxBytes) return false;
  await copyFile(path, rotatedPath(path));
  await truncate(path, 0);
  return true;
}

/**
 * Reads one log file (with its rotated predecessor) and then follows it: `start`
 * gives the existing lines (all, or the last `tail`), `poll` the complete lines
 * written since. It copes with both rotations: a truncated file is read again
 * from its start, and a file renamed away is drained before the new one is opened.
 */
export class FileCursor {
  private handle: FileHandle | undefined;
  private position = 0;
  private partial: Buffer = Buffer.alloc(0);

  constructor(readonly path: string) {}

  /** The existing lines; a last line without its newline is included when `includePartial`, else kept for `poll`. */
  async start(tail: number | undefined, includePartial: boolean): Promise<LogLine[]> {
    this.handle = await openIfExists(this.path);
    const lines: LogLine[] = [];
    if (this.handle) {
      const info = await this.handle.stat();
      const { complete, partial } = await lastLines(this.handle, info.size, tail ?? Infinity);
      lines.push(...complete.map((text) => ({ text, mtime: info.mtime })));
      this.position = info.size;
      if (includePartial && partial.length)
        lines.push({ text: partial.toString('utf8'), mtime: info.mtime });
      else this.partial = partial;
    }
    const missing = tail === undefined ? Infinity : tail - lines.length;
    if (missing > 0) {
      const older = await openIfExists(rotatedPath(this.path));
      if (older) {
        try {
          const info = await older.stat();
          const { complete, partial } = await lastLines(older, info.size, missing);
          const texts = partial.length
            ? [...complete, partial.toString('utf8')].slice(-missing)
            : complete;
          lines.unshift(...texts.map((text) => ({ text, mtime: info.mtime })));
        } finally {
          await older.close();
        }
      }
    }
    return lines;
  }

  /** The complete lines written since the last call. */
  async poll(): Promise<LogLine[]> {
    if (!this.handle) {
      this.handle = await openIfExists(this.path);
      this.position = 0;
      if (!this.handle) return [];
    }
    const info = await this.handle.stat();
    if (info.size < this.position) {
      this.position = 0; // truncated: copy-and-truncate rotation
      this.partial = Buffer.alloc(0);
    }
    const lines: LogLine[] = [];
    if (info.size > this.position) {
      const fresh = Buffer.alloc(info.size - this.position);
      const { bytesRead } = await this.handle.read(fresh, 0, fresh.length, this.position);
      this.position += bytesRead;
      const parts = splitLines(Buffer.concat([this.partial, fresh.subarray(0, bytesRead)]));
      this.partial = parts.pop()!;
      lines.push(...parts.map((part) => ({ text: part.toString('utf8'), mtime: info.mtime })));
    }
    const current = await stat(this.path).catch(() => undefined);
    if (current && current.ino !== info.ino) {
      // Renamed away (rename rotation): what it held is drained above; carry on with the new file.
      await this.handle.close();
      this.handle = undefined;
      this.partial = Buffer.alloc(0);
      lines.push(...(await this.poll()));
    }
    return lines;
  }

  async close(): Promise<void> {
    await this.handle?.close();
    this.handle = undefined;
  }
}

/** The last `count` complete lines of the file's first `end` bytes, and the bytes after the last newline. */
async function lastLines(
  handle: FileHandle,
  end: number,
  count: number,
): Promise<{ complete: string[]; partial: Buffer }> {
  const chunks: Buffer[] = [];
  let start = end;
  let newlines = 0;
  while (start > 0 && newlines <= count) {
    const length = Math.min(CHUNK_BYTES, start);
    start -= length;
    const chunk = Buffer.alloc(length);
    await handle.read(chunk, 0, length, start);
    chunks.unshift(chunk);
    for (const byte of chunk) if (byte === NEWLINE) newlines += 1;
  }
  const parts = splitLines(Buffer.concat(chunks));
  const partial = parts.pop()!;
  if (start > 0) parts.shift(); // the first part began before what was read
  const complete = count === 0 ? [] : parts.slice(-count);
  return { complete: complete.map((part) => part.toString('utf8')), partial };
}

/** Splits on newlines; the last element is what follows the last newline (maybe empty). Bytes, so no character is cut. */
function splitLines(bytes: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let from = 0;
  for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, from)) {
    parts.push(bytes.subarray(from, at));
    from = at + 1;
  }
  parts.push(bytes.subarray(from));
  return parts;
}

async function openIfExists(path: string): Promise<FileHandle | undefined> {
  try {
    return await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
