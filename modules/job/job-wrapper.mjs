// @ts-check
/**
 * The job wrapper: a small program run by Steward's own node (`node job-wrapper.mjs spec.json`),
 * detached, so a job's end is recorded even while Steward is down. It reads its spec (then deletes
 * it: it holds the secret environment), spawns the command with an argument array (no shell),
 * writes every output line as NDJSON `{ts, stream, line}` to job.log (rotated by rename past
 * log_max_bytes, one old file kept), enforces timeout_ms (SIGTERM to its process group, SIGKILL
 * to the command after stop_grace_ms), and writes exit.json atomically when the command ends.
 *
 * Plain JavaScript importing only node built-ins: node runs this file as it is, from the sources
 * (tests) and from dist/ (tsc copies it there), with an empty environment. `// @ts-check` and the
 * types of runner.ts and run-records.ts keep it in step with the TypeScript that writes its spec
 * and reads its exit record.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

/** @typedef {import('./runner.js').WrapperSpec} WrapperSpec */
/** @typedef {import('./run-records.js').ExitRecord} ExitRecord */

const specPath = process.argv[2] ?? '';
/** @type {WrapperSpec} */
const spec = JSON.parse(fs.readFileSync(specPath, 'utf8'));
fs.rmSync(specPath, { force: true });
const startedAt = new Date();
let logFd = fs.openSync(spec.log_path, 'a', 0o600);
let logBytes = fs.fstatSync(logFd).size;
/** @type {string[]} */
const stderrTail = [];

/**
 * @param {string} stream
 * @param {string} line
 */
function log(stream, line) {
  const text = JSON.stringify({ ts: new Date().toISOString(), stream, line }) + '\n';
  const bytes = Buffer.byteLength(text);
  if (logBytes > 0 && logBytes + bytes > spec.log_max_bytes) {
    fs.closeSync(logFd);
    fs.renameSync(spec.log_path, spec.log_path + '.1');
    logFd = fs.openSync(spec.log_path, 'a', 0o600);
    logBytes = 0;
  }
  fs.writeSync(logFd, text);
  logBytes += bytes;
  if (stream === 'stderr') {
    stderrTail.push(line.slice(0, 500));
    if (stderrTail.length > spec.tail_lines) stderrTail.shift();
  }
}

/** @param {string} stream */
function lineSplitter(stream) {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  return {
    /** @param {Buffer} chunk */
    write(chunk) {
      rest += decoder.write(chunk);
      for (let at = rest.indexOf('\n'); at !== -1; at = rest.indexOf('\n')) {
        log(stream, rest.slice(0, at));
        rest = rest.slice(at + 1);
      }
      if (rest.length > 65536) {
        log(stream, rest);
        rest = '';
      }
    },
    end() {
      rest += decoder.end();
      if (rest) log(stream, rest);
      rest = '';
    },
  };
}

const out = lineSplitter('stdout');
const err = lineSplitter('stderr');
/** @type {import('node:child_process').ChildProcess | undefined} */
let child;
let finished = false;
let timedOut = false;

/** @param {{ code?: number | null, signal?: string | null, error?: string }} result */
function finish(result) {
  if (finished) return;
  finished = true;
  out.end();
  err.end();
  const finishedAt = new Date();
  /** @type {ExitRecord} */
  const record = {
    run_id: spec.run_id,
    exit_code: result.code === undefined ? null : result.code,
    signal: result.signal || null,
    error: result.error || null,
    timed_out: timedOut,
    started_at: startedAt.toISOString(),
    finished_at: finishedAt.toISOString(),
    duration_ms: finishedAt.getTime() - startedAt.getTime(),
    stderr_tail: stderrTail,
  };
  fs.writeFileSync(spec.exit_path + '.tmp', JSON.stringify(record) + '\n', { mode: 0o600 });
  fs.renameSync(spec.exit_path + '.tmp', spec.exit_path);
  process.exit(0);
}

// Steward stops a job with SIGTERM to the group: the command gets it too; the wrapper stays to record the end.
process.on('SIGTERM', () => {
  if (child) child.kill('SIGTERM');
});
process.on('SIGHUP', () => undefined);

try {
  child = spawn(spec.command, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
} catch (error) {
  finish({ error: /** @type {Error} */ (error).message });
}
if (child) {
  const started = child;
  started.on('error', (error) => finish({ error: error.message }));
  started.stdout?.on('data', (chunk) => out.write(chunk));
  started.stderr?.on('data', (chunk) => err.write(chunk));
  started.on('close', (code, signal) => finish({ code, signal }));
  // A grandchild may keep the pipes open after the command ended: do not wait for it long.
  started.on('exit', (code, signal) => setTimeout(() => finish({ code, signal }), 1000));
  setTimeout(() => {
    timedOut = true;
    try {
      process.kill(-process.pid, 'SIGTERM');
    } catch {
      started.kill('SIGTERM');
    }
    setTimeout(() => started.kill('SIGKILL'), spec.stop_grace_ms);
  }, spec.timeout_ms);
}
