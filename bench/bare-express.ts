import { createServer } from 'node:http';

import express from 'express';

import { bornWithPrototypes } from '../src/api/born-with-prototypes.js';

/**
 * The peer of the API phase (bench/api-ratio.ts): a bare express 5 app in its own process, with the
 * JSON body parser and routes that answer a small JSON, as a new user's baseline would be. Prints
 * `listening <port>` once it listens on 127.0.0.1. With the argument `born`, its requests and
 * responses are made with express's prototypes, as Steward's server makes them
 * (src/api/born-with-prototypes.ts): the bare app with the same saving, for bench/bare-born.ts.
 */
const LIST = Array.from({ length: 50 }, (_, i) => ({
  id: `r-${i}`,
  status: 'COMPLETED',
  version: 1,
}));

const app = express();
app.use(express.json());
app.post('/things', (req, res) => {
  res.status(201).json({ id: String((req.body as { name?: unknown }).name), status: 'PENDING' });
});
app.get('/things/:id', (req, res) => {
  res.json({ id: req.params.id, status: 'COMPLETED', version: 1 });
});
app.get('/things', (_req, res) => {
  res.json({ items: LIST, next_page_token: null });
});
const born = process.argv[2] === 'born' && bornWithPrototypes(app);
const server = (born ? createServer(born, app) : createServer(app)).listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening ${typeof address === 'object' && address ? address.port : 0}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
