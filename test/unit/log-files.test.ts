import { appendFileSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { FileCursor, rotateByCopy } from '../../modules/child-process/log-files.js';

/** The log reader shared by the process and job modules: tail across the rotated file, and following through both rotations. */
describe('FileCursor', () => {
  let dir: string;
  let log: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'steward-logs-'));
    log = join(dir, 'out.log');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const texts = (lines: Array<{ text: string }>) => lines.map((line) => line.text);
  /** The initial lines of a fresh cursor, closed afterwards. */
  async function read(
    path: string,
    tail: number | undefined,
    includePartial = false,
  ): Promise<string[]> {
    const cursor = new FileCursor(path);
    try {
      return texts(await cursor.start(tail, includePartial));
    } finally {
      await cursor.close();
    }
  }

  it('gives all lines or the last N, reaching into the rotated file when needed', async () => {
    writeFileSync(`${log}.1`, 'a1\na2\na3\n');
    writeFileSync(log, 'b1\nb2\npartial');
    expect(await read(log, undefined, true)).toEqual(['a1', 'a2', 'a3', 'b1', 'b2', 'partial']);
    expect(await read(log, 2)).toEqual(['b1', 'b2']);
    expect(await read(log, 4)).toEqual(['a2', 'a3', 'b1', 'b2']);
    expect(await read(log, 0)).toEqual([]);
    expect(await read(join(dir, 'missing.log'), 5)).toEqual([]);
  });

  it('reads the tail of a file larger than one chunk, without cutting a character', async () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `line ${i} ${'é'.repeat(20)}`);
    writeFileSync(log, `${lines.join('\n')}\n`);
    expect(await read(log, 3)).toEqual(lines.slice(-3));
    expect(await read(log, undefined)).toHaveLength(5000);
  });

  it('follows growth, completes a partial line, and survives copy-and-truncate and rename rotation', async () => {
    writeFileSync(log, 'one\ntw');
    const cursor = new FileCursor(log);
    try {
      expect(texts(await cursor.start(undefined, false))).toEqual(['one']);
      appendFileSync(log, 'o\nthree\n');
      expect(texts(await cursor.poll())).toEqual(['two', 'three']);
      expect(await cursor.poll()).toEqual([]);

      appendFileSync(log, 'x'.repeat(50) + '\n');
      expect(texts(await cursor.poll())).toHaveLength(1);
      expect(await rotateByCopy(log, 10)).toBe(true);
      expect(statSync(log).size).toBe(0);
      expect(statSync(`${log}.1`).size).toBeGreaterThan(10);
      appendFileSync(log, 'after truncate\n');
      expect(texts(await cursor.poll())).toEqual(['after truncate']);

      appendFileSync(log, 'last of old\n');
      renameSync(log, `${log}.1`);
      writeFileSync(log, 'first of new\n');
      expect(texts(await cursor.poll())).toEqual(['last of old', 'first of new']);
      expect(await rotateByCopy(log, 1000)).toBe(false);
    } finally {
      await cursor.close();
    }
  });
});
