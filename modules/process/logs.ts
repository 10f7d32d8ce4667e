import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

import type { LogChunk, LogContext, SyncInput } from '../../src/sdk/index.js';
import { FileCursor, type LogLine, pause, stampedLine } from '../child-process/log-files.js';
import { resourceDir } from '../child-process/run-dir.js';

/**
 * The replicas' output, replica by replica (`stream` is `replica-<index>`), from
 * each replica's log file and its rotated predecessor. `tail` applies to each
 * replica. Following polls the files every `pollMs`, picks up replicas that
 * appear meanwhile, and ends when the reader goes away. Each line's `ts` is when the
 * replica wrote it: the log stamper (child-process/log-stamper.mjs) wrote it with the line.
 */
export async function* processLogs(
  runDir: string,
  pollMs: number,
  { resource }: SyncInput,
  ctx: LogContext,
): AsyncIterable<LogChunk> {
  const dir = resourceDir(runDir, resource);
  const cursors = new Map<number, FileCursor>();
  const chunks = (index: number, lines: LogLine[]): LogChunk[] =>
    lines.map((line) => ({ ...stampedLine(line), stream: `replica-${index}` }));
  try {
    for (const index of await replicaIndices(dir)) {
      const cursor = new FileCursor(join(dir, `replica-${index}.log`));
      cursors.set(index, cursor);
      yield* chunks(index, await cursor.start(ctx.tail, !ctx.follow));
    }
    while (ctx.follow && (await pause(pollMs, ctx.signal))) {
      for (const index of await replicaIndices(dir)) {
        if (cursors.has(index)) continue;
        const cursor = new FileCursor(join(dir, `replica-${index}.log`));
        cursors.set(index, cursor);
        yield* chunks(index, await cursor.start(undefined, false));
      }
      for (const [index, cursor] of cursors) yield* chunks(index, await cursor.poll());
    }
  } finally {
    await Promise.all([...cursors.values()].map((cursor) => cursor.close()));
  }
}

async function replicaIndices(dir: string): Promise<number[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names
    .map((name) => /^replica-(\d+)\.log$/.exec(name)?.[1])
    .filter((index): index is string => index !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}
