import { readLines } from '../../src/cli/lines.js';
import { createSseParser, type SseMessage } from '../../src/cli/sse.js';

async function* chunks(...parts: string[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield new TextEncoder().encode(part);
}

async function parse(
  ...parts: string[]
): Promise<{ messages: SseMessage[]; lastEventId: string; retryMs?: number }> {
  const parser = createSseParser();
  const messages: SseMessage[] = [];
  for await (const line of readLines(chunks(...parts))) {
    const message = parser.push(line);
    if (message) messages.push(message);
  }
  return { messages, lastEventId: parser.lastEventId(), retryMs: parser.retryMs() };
}

describe('the CLI event-stream parser', () => {
  it('splits lines on LF, CRLF and lone CR, also across chunks and inside multi-byte characters', async () => {
    const lines: string[] = [];
    const euro = new TextEncoder().encode('€');
    async function* raw() {
      yield new TextEncoder().encode('a\r');
      yield new TextEncoder().encode('\nb\rc\n');
      yield euro.slice(0, 1);
      yield euro.slice(1);
      yield new TextEncoder().encode('\nlast');
    }
    for await (const line of readLines(raw())) lines.push(line);
    expect(lines).toEqual(['a', 'b', 'c', '€', 'last']);
  });

  it('dispatches on blank lines, joins data lines, and skips comments', async () => {
    const { messages, lastEventId, retryMs } = await parse(
      '\uFEFF: heartbeat\n\nid: 3\nevent: resource.created\ndata: {"a":\ndata:1}\n\nretry: 250\ndata\n\n',
    );
    expect(messages).toEqual([
      { type: 'resource.created', data: '{"a":\n1}', lastEventId: '3' },
      { type: 'message', data: '', lastEventId: '3' },
    ]);
    expect(lastEventId).toBe('3');
    expect(retryMs).toBe(250);
  });

  it('takes the id of a frame without data (the resume point) and ignores an id with NUL', async () => {
    const { messages, lastEventId } = await parse('id: 41\n\n', 'id: 4\u00002\ndata: x\n\n');
    expect(messages).toEqual([{ type: 'message', data: 'x', lastEventId: '41' }]);
    expect(lastEventId).toBe('41');
  });

  it('does not dispatch a frame the stream ended in the middle of', async () => {
    expect((await parse('id: 7\ndata: cut')).messages).toEqual([]);
  });
});
