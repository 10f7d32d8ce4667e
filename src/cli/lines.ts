/**
 * The lines of a response body as they arrive: split on LF, CRLF or a lone CR
 * (what both NDJSON and server-sent events allow), decoded as UTF-8 across
 * chunk boundaries. A last line without an ending is yielded too.
 */
export async function* readLines(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  // A CR at the very end of a chunk may be the first half of a CRLF.
  let pendingCr = false;
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    if (pendingCr && buffer.startsWith('\n')) buffer = buffer.slice(1);
    pendingCr = false;
    let start = 0;
    for (let i = 0; i < buffer.length; i += 1) {
      const c = buffer[i];
      if (c !== '\n' && c !== '\r') continue;
      yield buffer.slice(start, i);
      if (c === '\r') {
        if (i + 1 === buffer.length) pendingCr = true;
        else if (buffer[i + 1] === '\n') i += 1;
      }
      start = i + 1;
    }
    buffer = buffer.slice(start);
  }
  buffer += decoder.decode();
  if (buffer.length > 0) yield buffer;
}
