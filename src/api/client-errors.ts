import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';

import { errorBody } from './http-errors.js';

/**
 * Requests node's HTTP parser refuses before express sees them (a request line and
 * headers over node's 16 KiB limit, broken framing) get the error JSON as well,
 * instead of node's bare 400 or 431. The closed set of codes has no 431: an
 * oversized head is an `invalid_request` that says so.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: Error & { code?: string; rawPacket?: Buffer }, socket: Socket) => {
    const answering = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })
      ._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || answering?.headersSent) {
      socket.destroy();
      return;
    }
    const message =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? 'the request line and headers are larger than 16 KiB'
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? 'the request did not arrive in time'
          : `the request is not valid HTTP/1.1 (${err.code ?? 'unparsable'})`;
    // An answer to HEAD has no body (the client would read one as garbage); the packet that failed starts with the method.
    answerBadRequest(
      socket,
      message,
      Buffer.isBuffer(err.rawPacket) && err.rawPacket.toString('latin1', 0, 5) === 'HEAD ',
    );
  });
}

/** A request line of HTTP/0.9 (`GET /`, no version) or 2.0 and up, which node's parser lets through: 400, then close. */
export function refuseHttpVersion(req: IncomingMessage): void {
  answerBadRequest(
    req.socket,
    `HTTP/${req.httpVersion} is not supported; send HTTP/1.1`,
    req.method === 'HEAD',
  );
}

function answerBadRequest(socket: Socket, message: string, head: boolean): void {
  const body = JSON.stringify(errorBody('invalid_request', message));
  socket.end(
    `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${randomUUID()}\r\nConnection: close\r\n\r\n${head ? '' : body}`,
  );
}
