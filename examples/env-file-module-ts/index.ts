// env_file in TypeScript: the same kind as ../env-file-module/index.js, typed from its TypeBox
// schemas with `Static` (no casts). Steward loads index.ts by transpiling it (no type check):
// run `npx tsc --noEmit` for that. Only types are imported, so nothing is needed at run time.
import { chmod, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import type { ModuleSdk, Resource, Static } from '../../src/sdk/index.js';

export default ({ defineModule, stepwise, Type, TerminalError }: ModuleSdk) => {
  const Mode = Type.String({ pattern: '^0[0-7]{3}$', default: '0600' });
  const Configs = Type.Object({
    file: Type.String({ pattern: '^\\w[\\w.-]*$' }), // a name in the project's folder, never ..
    vars: Type.Array(Type.String({ pattern: '^(?!TOKEN=)\\w+=.*$' })), // KEY=value lines
    token: Type.String({ pattern: '^.+$', writeOnly: true }), // a secret: the API never shows it
    mode: Mode,
  });
  const Output = Type.Object({ path: Type.String() });
  type Configs = Static<typeof Configs>;
  type Output = Static<typeof Output>;
  /** `state.data`: the steps left, and whether this resource holds the file (made or imported it). */
  type Data = { pending: string[]; held?: boolean };
  type EnvFile = Resource<Configs, Output, Data>;

  const pathOf = (r: EnvFile) =>
    join(process.env.ENV_FILE_DIR || '/tmp', r.project, r.spec.configs.file);
  const header = (r: EnvFile) => `# made by steward for ${r.urn} at ${r.created_at}\n`;
  const read = (r: EnvFile) =>
    readFile(pathOf(r), 'utf8').catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return null;
      throw e;
    });

  return defineModule<Configs, Output, Data>({
    kind: 'env_file',
    description: 'KEY=value lines and a secret TOKEN in a file. Steps: write, chmod.',
    configSchema: Configs,
    outputSchema: Output,
    actions: {
      create: { description: 'Write the file, then set its mode.' },
      update: { description: 'Rewrite it.' },
      delete: { description: 'Remove it, if this resource made or imported it.' },
      chmod: { description: 'Set its mode.', paramsSchema: Type.Object({ mode: Mode }) },
    },
    claimKey: ({ project, configs }) => `${project}/${configs.file}`, // one resource per file
    ...stepwise<Configs, Output, Data>({
      plan: ({ action, params, desired }) => {
        if (action === 'delete') return ['remove'];
        if (action !== 'chmod') return ['write', 'chmod']; // create, update
        // params were validated against chmod's paramsSchema: { mode }
        return { steps: ['chmod'], configs: Object.assign({}, desired.spec.configs, params) };
      },
      steps: {
        async write(r) {
          // A create writes where nothing is, or where an earlier try of its own wrote.
          const found = await read(r);
          if (r.state.action === 'create' && found !== null && !found.startsWith(header(r)))
            throw new TerminalError(`${r.spec.configs.file} exists, not made by this resource`);
          const lines = [`TOKEN=${r.spec.configs.token}`, ...r.spec.configs.vars];
          await mkdir(dirname(pathOf(r)), { recursive: true });
          await writeFile(pathOf(r), `${header(r)}${lines.join('\n')}\n`, { mode: 0o600 });
          return { held: true }; // merged into state.data: delete removes only a file it holds
        },
        chmod: (r) => chmod(pathOf(r), Number.parseInt(r.spec.configs.mode, 8)),
        async remove(r) {
          if (r.state.data?.held) await rm(pathOf(r), { force: true });
        },
      },
      output: (r) => ({ path: pathOf(r) }),
    }),
    async observe({ resource: r }) {
      const found = await read(r);
      if (found === null) return { exists: false };
      const lines = found.match(/^\w+=.*$/gm) ?? [];
      const vars = lines.filter((line) => !line.startsWith('TOKEN='));
      const token = lines.find((line) => line.startsWith('TOKEN='))?.slice('TOKEN='.length);
      const mode = (await stat(pathOf(r))).mode.toString(8).slice(-4); // 100600 → 0600
      const configs = { vars, token, mode };
      return {
        exists: true,
        configs,
        output: { path: pathOf(r) },
        data: { pending: [], held: true },
      };
    },
  });
};
