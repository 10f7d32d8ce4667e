/**
 * greeting: a text file that greets someone, `<root>/<project>/<name>.txt`, holding for example
 * `Hello, Alice!`. The example docs/modules.md loads and tries: two steps (`write`, then `check`, which
 * reads the file back), a module action (`translate`), a ValidationError from plan and a
 * TerminalError from sync. `npm test` runs the contract kit on it
 * (test/integration/example-modules.test.ts).
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import {
  defineModule,
  type ModuleDefinition,
  TerminalError,
  ValidationError,
} from '../../src/sdk/index.js';

const WORDS = { en: 'Hello', fr: 'Bonjour', de: 'Hallo' };

/** `spec.configs`, as `configSchema` accepts them (`word` defaults to Hello). */
export type GreetingConfigs = { to: string; word: string };
/** `state.output`: where the greeting is and what it says. */
export type GreetingOutput = { path: string; text: string };
/** `state.data`: the steps sync has left. */
export type GreetingData = { pending: ('write' | 'check' | 'remove')[] };

/** The module, writing under `root` (its own folder: one per project inside it). */
export function createGreetingModule({ root }: { root: string }): ModuleDefinition {
  return defineModule<GreetingConfigs, GreetingOutput, GreetingData>({
    kind: 'greeting',
    description: 'A text file that greets someone, under GREETING_DIR. Steps: write, check.',
    configSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['to'],
      properties: {
        to: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[^\\n]*$' },
        word: { type: 'string', minLength: 1, maxLength: 40, default: 'Hello' },
      },
    },
    outputSchema: {
      type: 'object',
      properties: { path: { type: 'string' }, text: { type: 'string' } },
    },
    actions: {
      create: { description: 'Write the greeting.' },
      update: { description: 'Rewrite it.' },
      delete: { description: 'Remove the file.' },
      translate: {
        description: 'Say it in another language.',
        paramsSchema: {
          type: 'object',
          additionalProperties: false,
          required: ['language'],
          properties: { language: { enum: Object.keys(WORDS) } },
        },
      },
    },

    // Pure: decides the configs to store and the steps for sync. No I/O, no clock.
    plan({ action, params, desired }) {
      if (action === 'delete') return { data: { pending: ['remove'] } };
      if (action === 'translate') {
        const word = desired.spec.configs.word;
        if (!Object.values(WORDS).includes(word)) {
          throw new ValidationError(
            `"${word}" is not a word this module can translate; PATCH it instead`,
            { word },
          );
        }
        // params were validated against the action's paramsSchema: language is one of WORDS.
        const { language } = params as { language: keyof typeof WORDS };
        return {
          configs: { ...desired.spec.configs, word: WORDS[language] },
          data: { pending: ['write', 'check'] },
        };
      }
      return { data: { pending: ['write', 'check'] } }; // create, update
    },

    // One step a call, the rest left in data; each step is safe to run twice.
    async sync({ resource }, ctx) {
      const path = join(root, resource.project, `${resource.name}.txt`);
      const text = `${resource.spec.configs.word}, ${resource.spec.configs.to}!\n`;
      const [step, ...rest] = resource.state.data?.pending ?? [];
      try {
        if (step === 'write') {
          await mkdir(dirname(path), { recursive: true });
          await writeFile(`${path}.tmp`, text, { signal: ctx.signal });
          await rename(`${path}.tmp`, path); // never half a file
        } else if (step === 'check') {
          const found = await readFile(path, { encoding: 'utf8', signal: ctx.signal });
          // someone changed it: again
          if (found !== text) return { status: 'PENDING', data: { pending: ['write', 'check'] } };
        } else if (step === 'remove') {
          await rm(path, { force: true }); // already gone is fine
        }
      } catch (err) {
        // Retrying will not fix a permission problem: say so at once.
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS')
          throw new TerminalError(`cannot ${step} ${path}: ${code}`);
        throw err; // anything else is retried with backoff
      }
      ctx.log.debug('greeting step done', { step, path });
      if (rest.length) return { status: 'PENDING', data: { pending: rest } };
      if (resource.state.action === 'delete') return { status: 'COMPLETED' };
      return { status: 'COMPLETED', data: { pending: [] }, output: { path, text } };
    },
  });
}

/** What STEWARD_MODULE_PATHS loads (from dist/, once built): greetings go under GREETING_DIR. */
export default createGreetingModule({
  root: process.env.GREETING_DIR || join(tmpdir(), 'steward-greetings'),
});
