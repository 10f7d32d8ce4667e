import { stringify } from 'yaml';

import { CliError, EXIT } from './cli-error.js';

export type OutputFormat = 'table' | 'json';

export function parseOutputFormat(value: string): OutputFormat {
  if (value === 'table' || value === 'json') return value;
  throw new CliError(`--output must be table or json, not "${value}"`, EXIT.usage);
}

/** Where commands write: stdout for results, stderr for progress and warnings. */
export interface Printer {
  format: OutputFormat;
  /** A line for people (table output only). */
  line(text: string): void;
  /** A value for scripts: pretty JSON. */
  json(value: unknown): void;
  /** One compact JSON value a line (streams: events, logs). */
  jsonLine(value: unknown): void;
  /** Progress and warnings; never mixed into stdout. */
  note(text: string): void;
  /** Whether stderr is a terminal, where progress can be redrawn in place. */
  interactive: boolean;
  /** Redraws the current stderr line (terminals only); "" clears it. */
  redraw(text: string): void;
}

export function createPrinter(
  format: OutputFormat,
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WriteStream = process.stderr,
): Printer {
  return {
    format,
    line: (text) => out.write(`${text}\n`),
    json: (value) => out.write(`${JSON.stringify(value, null, 2)}\n`),
    jsonLine: (value) => out.write(`${JSON.stringify(value)}\n`),
    note: (text) => err.write(`${text}\n`),
    interactive: err.isTTY === true,
    redraw: (text) => err.write(`\r\x1b[K${text.slice(0, Math.max(20, (err.columns || 80) - 1))}`),
  };
}

/** A cell or a progress line: a multi-line message (a job's stderr tail) on one line. */
export function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' | ');
}

/** Columns padded to their widest cell; the last column is not padded. */
export function table(
  headers: readonly string[],
  cells: ReadonlyArray<ReadonlyArray<string>>,
): string {
  const rows = cells.map((row) => row.map(oneLine));
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const render = (cells: ReadonlyArray<string>) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [render(headers), ...rows.map(render)].join('\n');
}

/** `key: value` lines with the keys aligned. */
export function fields(pairs: ReadonlyArray<readonly [string, string]>): string {
  const width = Math.max(...pairs.map(([key]) => key.length)) + 1;
  return pairs.map(([key, value]) => `${`${key}:`.padEnd(width)} ${value}`).join('\n');
}

/** A nested value for people, as indented YAML under a heading. */
export function block(heading: string, value: unknown): string {
  const isEmpty =
    value === null ||
    value === undefined ||
    (typeof value === 'object' && Object.keys(value).length === 0);
  if (isEmpty) return `${heading}: {}`;
  const body = stringify(value, { lineWidth: 0 }).trimEnd();
  return `${heading}:\n${body
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n')}`;
}

/** "5s", "3m", "2h", "4d" since `iso`; "-" when there is no time. */
export function age(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return '-';
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86_400)}d`;
}

export function labelsText(labels: Record<string, string> | undefined): string {
  const entries = Object.entries(labels ?? {});
  return entries.length === 0 ? '-' : entries.map(([k, v]) => `${k}=${v}`).join(',');
}
