/**
 * `steward module init NAME --lang js`: index.js in the factory form (Steward's
 * loader hands it the SDK). `__KIND__` and `__DIR_VAR__` are filled in.
 */
export const JS_INDEX = `// __KIND__: one text file per resource, $__DIR_VAR__/<project>/<name>.txt (default: a folder in /tmp).
// Steward calls this function with its SDK and loads the definition it returns.
// Edit the schema, plan (which steps an action needs), the steps, output and observe.
'use strict';
const fs = require('node:fs/promises');
const os = require('node:os');
const path = require('node:path');

const ROOT = process.env.__DIR_VAR__ || path.join(os.tmpdir(), 'steward-__KIND__');
const fileOf = (resource) => path.join(ROOT, resource.project, resource.name + '.txt');

module.exports = ({ defineModule, stepwise, Type, TerminalError }) => {
  const Configs = Type.Object(
    {
      text: Type.String({ maxLength: 65536, description: 'What the file holds.' }),
      mode: Type.String({ pattern: '^0[0-7]{3}$', default: '0644', description: 'Its permissions.' }),
    },
    { additionalProperties: false },
  );
  return defineModule({
    kind: '__KIND__',
    description: 'A text file under $__DIR_VAR__ (replace with what your kind manages).',
    configSchema: Configs,
    outputSchema: Type.Object({ path: Type.String(), bytes: Type.Integer() }),
    actions: {
      create: { description: 'Write the file.' },
      update: { description: 'Write it again.' },
      delete: { description: 'Remove it.' },
      append: {
        description: 'Append a line to the text.',
        paramsSchema: Type.Object({ line: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
      },
    },
    ...stepwise({
      // Pure: choose the steps (and, for append, the new configs). No I/O, no clock.
      plan({ action, params, desired }) {
        if (action === 'delete') return ['remove'];
        if (action === 'append') {
          const configs = desired.spec.configs;
          return { steps: ['write', 'chmod'], configs: { ...configs, text: configs.text + params.line + '\\n' } };
        }
        return ['write', 'chmod'];
      },
      // One step a sync call; each must be safe to run twice.
      steps: {
        async write(resource) {
          const file = fileOf(resource);
          await fs.mkdir(path.dirname(file), { recursive: true });
          await fs.writeFile(file + '.tmp', resource.spec.configs.text);
          await fs.rename(file + '.tmp', file); // never half a file
        },
        async chmod(resource) {
          try {
            await fs.chmod(fileOf(resource), Number.parseInt(resource.spec.configs.mode, 8));
          } catch (err) {
            if (err.code === 'EPERM') throw new TerminalError('cannot chmod ' + fileOf(resource)); // retrying will not help
            throw err; // anything else is retried
          }
        },
        async remove(resource) {
          await fs.rm(fileOf(resource), { force: true }); // already gone is fine
        },
      },
      output: (resource) => ({ path: fileOf(resource), bytes: Buffer.byteLength(resource.spec.configs.text) }),
    }),
    // Reads the file, changes nothing: for import and refresh.
    async observe({ resource }) {
      const file = fileOf(resource);
      try {
        const [text, stat] = await Promise.all([fs.readFile(file, 'utf8'), fs.stat(file)]);
        const mode = '0' + (stat.mode & 0o777).toString(8).padStart(3, '0');
        return { exists: true, configs: { text, mode }, output: { path: file, bytes: Buffer.byteLength(text) } };
      } catch (err) {
        if (err.code === 'ENOENT') return { exists: false };
        throw err;
      }
    },
  });
};
`;
