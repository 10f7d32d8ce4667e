import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Counts requests in flight per connection, so shutdown can end every connection
 * that has none. Node's closeIdleConnections() leaves alone a connection that has
 * not sent a request yet (a client's spare keep-alive socket, which fetch opens
 * when a watch is aborted), and server.close() then waits until the client drops it.
 */
export function trackConnections(server: Server) {
  const requests = new Map<Socket, number>();
  server.on('connection', (socket: Socket) => {
    requests.set(socket, 0);
    socket.once('close', () => requests.delete(socket));
  });
  server.on(
    'request',
    (req: { socket: Socket }, res: { once(event: 'close', listener: () => void): unknown }) => {
      const { socket } = req;
      requests.set(socket, (requests.get(socket) ?? 0) + 1);
      res.once('close', () => {
        const count = requests.get(socket);
        if (count !== undefined) requests.set(socket, count - 1);
      });
    },
  );
  return {
    /** Ends every connection with no request in flight; call after server.close(). */
    closeUnused(): void {
      for (const [socket, count] of requests) if (count === 0) socket.destroy();
    },
  };
}
