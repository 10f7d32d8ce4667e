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

    // A line of the generated part that the code does not write goes: the part is the code's.
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace('## Reproduce\n', '## Reproduce\n\nstale\n'),
    );
    writeMarkdown(file, results('2030-01-01'));
    const once = readFileSync(file, 'utf8');
    expect(once).toContain('Written by `npm run bench` on 2030-01-01');
    expect(once).not.toContain('\nstale\n');
    expect(handWritten(once)).toBe(before);
    // The doc's commands to reproduce are the ones the code writes (they hold no figures).
    const reproduce = (text: string) => /\n## Reproduce\n[^]*?```\n\n/.exec(text)?.[0];
    expect(reproduce(readFileSync(BENCHMARKS, 'utf8'))).toBe(reproduce(once));

    writeMarkdown(file, results('2030-01-02'));
    expect(readFileSync(file, 'utf8')).toBe(once.replace('2030-01-01', '2030-01-02'));
  });

  it('refuses to write over a file whose end marker was edited away', () => {
    const file = join(dir, 'benchmarks.md');
    writeFileSync(file, readFileSync(BENCHMARKS, 'utf8').replace(END, ''));
    const before = readFileSync(file, 'utf8');
    expect(() => writeMarkdown(file, results('2030-01-01'))).toThrow(/put back/);
    expect(readFileSync(file, 'utf8')).toBe(before);
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
