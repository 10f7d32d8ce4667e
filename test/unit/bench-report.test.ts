import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { type BenchResults, writeMarkdown } from '../../bench/report.js';

const BENCHMARKS = fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url));
const END = '<!-- end of what `npm run bench` writes -->';

const results = (date: string): BenchResults => ({
  command: 'npm run bench',
  machine: {
    cpu: 'a CPU',
    cores: 2,
    memoryGiB: 8,
    os: 'an OS',
    node: 'v20',
    sqlite: '3',
    date,
  },
  totalMs: 1,
  cpu: {},
});

/** `npm run bench` rewrites its own part of docs/benchmarks.md and keeps what is written by hand. */
describe('writeMarkdown (bench/report.ts)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'steward-bench-report-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps every hand-written section of docs/benchmarks.md, byte for byte, run after run', () => {
    const file = join(dir, 'benchmarks.md');
    copyFileSync(BENCHMARKS, file);
    const handWritten = (text: string) => text.slice(text.indexOf(END) + END.length);
    const before = handWritten(readFileSync(BENCHMARKS, 'utf8'));
    expect(before).toContain('\n## API\n');
    expect(before).toContain('\n## Console\n');

    writeMarkdown(file, results('2030-01-01'));
    const once = readFileSync(file, 'utf8');
    expect(once).toContain('Written by `npm run bench` on 2030-01-01');
    expect(once).not.toContain('2026-11-25T11:15:54');
    expect(handWritten(once)).toBe(before);

    writeMarkdown(file, results('2030-01-02'));
    expect(readFileSync(file, 'utf8')).toBe(once.replace('2030-01-01', '2030-01-02'));
  });

  it('keeps the console section of a file written before the end marker existed', () => {
    const file = join(dir, 'benchmarks.md');
    writeFileSync(file, '# Benchmark results\n\nold figures\n\n## Console\n\nby hand\n');
    writeMarkdown(file, results('2030-01-01'));
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain('old figures');
    expect(text.endsWith('\n## Console\n\nby hand\n')).toBe(true);
  });
});
