import { startBareExpress } from './api-processes.js';
import { cannon } from './cannon.js';

/**
 * The bare express peer of the API phase as it is (express's own server) and with the request
 * constructors Steward's server uses (src/api/born-with-prototypes.ts), alternated, POST and GET,
 * 32 connections, 8 s each: what the same saving does for the bare app (docs/decisions.md,
 * "Requests born with express's prototypes"). Run: `npm run -s build && node dist/bench/bare-born.js [rounds]`.
 */
const rounds = Number(process.argv[2] ?? 2);
for (let round = 1; round <= rounds; round += 1) {
  for (const born of [false, true]) {
    const bare = await startBareExpress(born);
    try {
      const post = await cannon({
        url: `${bare.url}/things`,
        method: 'POST',
        connections: 32,
        duration: 8,
        next: () => ({ body: JSON.stringify({ name: 'x' }) }),
      });
      const get = await cannon({ url: `${bare.url}/things/x`, connections: 32, duration: 8 });
      console.log(
        `round ${round} ${born ? 'born with prototypes' : "express's own server"}: ` +
          `POST ${post.requestsPerS.toFixed(0)}/s, GET ${get.requestsPerS.toFixed(0)}/s`,
      );
    } finally {
      await bare.stop();
    }
  }
}
