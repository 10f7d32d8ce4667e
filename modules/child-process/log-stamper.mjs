// @ts-check
/**
 * The log stamper: `node log-stamper.mjs`, its stdout the log file opened O_APPEND, run by Steward's own node, detached, between a
 * `process` replica and its log file. The replica's stdout and stderr are the write end of a pipe;
 * the stamper reads the other end and appends each line to the log file (its stdout) as NDJSON `{ts, line}`, `ts`
 * being when the line arrived (its newline, or the program's end for a last line without one).
 * So a line keeps the time it was written, whenever it is read. It ends when every writer has
 * closed the pipe (the program and whatever it started with its output), so it outlives Steward
 * as the program does. Steward opened the file O_APPEND before either started: the module's copy-and-truncate rotation works
 * under it as it did under the program.
 *
 * Plain JavaScript importing only node built-ins, as job-wrapper.mjs: node runs this file as it
 * is, from the sources (tests) and from dist/ (tsc copies it there), with an empty environment.
 */
import fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

/** A line longer than this is written in pieces, as the job wrapper does. */
const MAX_LINE = 65536;

/** The log file: Steward opened it (O_APPEND) and handed it over as stdout. */
const fd = 1;
const decoder = new StringDecoder('utf8');
let rest = '';

/** @param {string} line */
function write(line) {
  fs.writeSync(fd, JSON.stringify({ ts: new Date().toISOString(), line }) + '\n');
}

process.on('SIGHUP', () => undefined);
process.stdin.on('data', (chunk) => {
  rest += decoder.write(chunk);
  for (let at = rest.indexOf('\n'); at !== -1; at = rest.indexOf('\n')) {
    write(rest.slice(0, at));
    rest = rest.slice(at + 1);
  }
  if (rest.length > MAX_LINE) {
    write(rest);
    rest = '';
  }
});
process.stdin.on('end', () => {
  rest += decoder.end();
  if (rest) write(rest);
  process.exit(0);
});
