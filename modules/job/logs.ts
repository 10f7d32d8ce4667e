import type { LogChunk, LogContext, SyncInput } from '../../src/sdk/index.js';
import { FileCursor, type LogLine, pause, stampedLine } from '../child-process/log-files.js';
import { isSameProcess } from '../child-process/proc-info.js';
import { resourceDir } from '../child-process/run-dir.js';
import { readExit, readRun, runFiles } from './run-records.js';

/**
 * The job's output from job.log (and job.log.1), as the wrapper timestamped it (stampedLine);
 * every run appends to the same log. Following ends once the run is over and
 * its last lines are out (or when the reader goes away).
 */
export async function* jobLogs(
  runDir: string,
  pollMs: number,
  { resource }: SyncInput,
  ctx: LogContext,
): AsyncIterable<LogChunk> {
  const dir = resourceDir(runDir, resource);
  const cursor = new FileCursor(runFiles(dir).log);
  try {
    yield* (await cursor.start(ctx.tail, false)).map(toChunk);
    while (ctx.follow) {
      const over = await isOver(dir, resource.state.operation_id, resource.state.status);
      yield* (await cursor.poll()).map(toChunk);
      if (over || !(await pause(pollMs, ctx.signal))) break;
    }
  } finally {
    await cursor.close();
  }
}

/** No wrapper alive, and either the resource's run has recorded its end or the resource was not running at all. */
async function isOver(dir: string, runId: string, status: string): Promise<boolean> {
  const run = await readRun(dir);
  if (run && isSameProcess(run)) return false;
  if (status !== 'PENDING') return true;
  return (await readExit(dir))?.run_id === runId;
}

function toChunk(line: LogLine): LogChunk {
  const stamped = stampedLine(line);
  return { ...stamped, stream: stamped.stream ?? 'stdout' };
}
