import { type SseFrame, SseParser } from '../../ui/src/api/sse-parser.js';

/** The console's text/event-stream parser (ui/src/api/sse-parser.ts), fed as the network splits it. */
function parse(chunks: string[]): { frames: SseFrame[]; lastEventId: string | undefined } {
  const frames: SseFrame[] = [];
  const parser = new SseParser((frame) => frames.push(frame));
  for (const chunk of chunks) parser.push(chunk);
  return { frames, lastEventId: parser.lastEventId };
}

const STREAM =
  'id: 41\n\n: heartbeat\n\nid: 42\nevent: resource.created\ndata: {"id":42}\n\n' +
  'event: error\ndata: {"error":\ndata: 1}\n\n';

describe('SseParser', () => {
  it('reads frames, ids, comments and multi-line data as the API sends them', () => {
    expect(parse([STREAM])).toEqual({
      frames: [
        { event: 'resource.created', data: '{"id":42}', id: '42' },
        { event: 'error', data: '{"error":\n1}', id: '42' },
      ],
      lastEventId: '42',
    });
  });

  it('gives the same frames however the stream is cut, CRLF and CR line ends included', () => {
    const whole = parse([STREAM]);
    for (let size = 1; size <= 7; size += 1) {
      const chunks = STREAM.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g'))!;
      expect(parse(chunks)).toEqual(whole);
    }
    const crlf = STREAM.replace(/\n/g, '\r\n');
    expect(parse(crlf.split(''))).toEqual(whole);
    expect(parse([STREAM.replace(/\n/g, '\r')])).toEqual(whole);
  });

  it('moves the resume point on an id-only frame, dispatches nothing for it, and names a frame without event "message"', () => {
    expect(parse(['id: 7\n\n'])).toEqual({ frames: [], lastEventId: '7' });
    expect(parse(['data:x\n\n']).frames).toEqual([{ event: 'message', data: 'x', id: undefined }]);
    // Incomplete: nothing until the blank line.
    expect(parse(['data: x\n']).frames).toEqual([]);
  });
});
