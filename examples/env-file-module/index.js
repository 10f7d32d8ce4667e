import { chmod, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
const pathOf = (r) => join(process.env.ENV_FILE_DIR || '/tmp', r.project, r.spec.configs.file);
const header = (r) => `# made by steward for ${r.urn} at ${r.created_at}\n`; // who made the file
const read = (r) =>
  readFile(pathOf(r), 'utf8').catch((e) => (e.code === 'ENOENT' ? null : Promise.reject(e)));
const mode = { type: 'string', pattern: '^0[0-7]{3}$', default: '0600' }; // a plain JSON Schema
export default ({ defineModule, stepwise, Type, TerminalError }) =>
  defineModule({
    kind: 'env_file', // <ENV_FILE_DIR>/<project>/<file>; walked through in docs/modules.md
    description: 'KEY=value lines and a secret TOKEN in a file. Steps: write, chmod.',
    configSchema: Type.Object({
      file: Type.String({ pattern: '^\\w[\\w.-]*$' }), // a name in the project's folder, never ..
      vars: Type.Array(Type.String({ pattern: '^(?!TOKEN=)\\w+=.*$' })), // KEY=value lines
      token: Type.String({ pattern: '^.+$', writeOnly: true }), // a secret: the API never shows it
      mode,
    }),
    actions: { create: {}, update: {}, delete: {}, chmod: { paramsSchema: Type.Object({ mode }) } },
    claimKey: ({ project, configs }) => `${project}/${configs.file}`, // one resource per file
    ...stepwise({
      plan: ({ action, params, desired: next }) => {
        if (action === 'chmod')
          return { steps: [action], configs: { ...next.spec.configs, ...params } };
        return action === 'delete' ? ['remove'] : ['write', 'chmod'];
      },
      steps: {
        async write(r) {
          if (r.state.action === 'create' && !((await read(r)) ?? header(r)).startsWith(header(r)))
            throw new TerminalError(`${r.spec.configs.file} exists, not made by this resource`);
          const lines = [`TOKEN=${r.spec.configs.token}`, ...r.spec.configs.vars];
          await mkdir(dirname(pathOf(r)), { recursive: true });
          await writeFile(pathOf(r), `${header(r)}${lines.join('\n')}\n`, { mode: 0o600 });
          return { held: true }; // merged into state.data: delete removes only a file it holds
        },
        chmod: (r) => chmod(pathOf(r), Number.parseInt(r.spec.configs.mode, 8)),
        remove: (r) => r.state.data.held && rm(pathOf(r), { force: true }),
      },
      output: (r) => ({ path: pathOf(r) }),
    }),
    async observe({ resource: r }) {
      const found = await read(r);
      if (found === null) return { exists: false };
      const lines = found.match(/^\w+=.*$/gm) ?? [];
      const vars = lines.filter((line) => !line.startsWith('TOKEN='));
      const token = lines.find((line) => line.startsWith('TOKEN='))?.slice('TOKEN='.length);
      const configs = { vars, token, mode: (await stat(pathOf(r))).mode.toString(8).slice(-4) };
      return { exists: true, configs, output: { path: pathOf(r) }, data: { held: true } };
    },
  });
