/**
 * `steward module init NAME --lang ts`: index.ts in the factory form. Steward's
 * loader transpiles it (no type check) and hands it the SDK; `npx tsc --noEmit`
 * checks it against the local types below. `__KIND__` and `__DIR_VAR__` are filled in.
 */
export const TS_INDEX = `// __KIND__: one text file per resource, $__DIR_VAR__/<project>/<name>.txt (default: a folder in /tmp).
// Steward transpiles this file, calls the default export with its SDK and loads the definition it returns.
// Edit the schema, plan (which steps an action needs), the steps, output and observe.
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** spec.configs, as the schema below fills them in. */
interface Configs {
  text: string;
  mode: string;
}
interface Resource {
  project: string;
  name: string;
  spec: { configs: Configs };
}
interface PlanInput {
  action: string;
  params: { line?: string };
  desired: Resource;
}
/** The part of Steward's SDK this module uses (Steward hands the real one in). */
interface Sdk {
  defineModule<T>(definition: T): T;
  stepwise(helper: {
    plan(input: PlanInput): string[] | { steps: string[]; configs?: Configs };
    steps: Record<string, (resource: Resource) => Promise<void> | void>;
    output?(resource: Resource): { path: string; bytes: number };
  }): object;
  Type: {
    Object(properties: object, options?: object): object;
    String(options?: object): object;
    Integer(options?: object): object;
  };
  TerminalError: new (message: string) => Error;
}

const ROOT = process.env.__DIR_VAR__ || join(tmpdir(), 'steward-__KIND__');
const fileOf = (resource: Resource) => join(ROOT, resource.project, \`\${resource.name}.txt\`);

export default ({ defineModule, stepwise, Type, TerminalError }: Sdk) =>
  defineModule({
    kind: '__KIND__',
    description: 'A text file under $__DIR_VAR__ (replace with what your kind manages).',
    configSchema: Type.Object(
      {
        text: Type.String({ maxLength: 65536, description: 'What the file holds.' }),
        mode: Type.String({ pattern: '^0[0-7]{3}$', default: '0644', description: 'Its permissions.' }),
      },
      { additionalProperties: false },
    ),
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
          return { steps: ['write', 'chmod'], configs: { ...configs, text: \`\${configs.text}\${params.line}\\n\` } };
        }
        return ['write', 'chmod'];
      },
      // One step a sync call; each must be safe to run twice.
      steps: {
        async write(resource) {
          const file = fileOf(resource);
          await mkdir(dirname(file), { recursive: true });
          await writeFile(\`\${file}.tmp\`, resource.spec.configs.text);
          await rename(\`\${file}.tmp\`, file); // never half a file
        },
        async chmod(resource) {
          try {
            await chmod(fileOf(resource), Number.parseInt(resource.spec.configs.mode, 8));
          } catch (err) {
            // retrying will not help a permission problem; anything else is retried
            if ((err as NodeJS.ErrnoException).code === 'EPERM')
              throw new TerminalError(\`cannot chmod \${fileOf(resource)}\`);
            throw err;
          }
        },
        async remove(resource) {
          await rm(fileOf(resource), { force: true }); // already gone is fine
        },
      },
      output: (resource) => ({ path: fileOf(resource), bytes: Buffer.byteLength(resource.spec.configs.text) }),
    }),
    // Reads the file, changes nothing: for import and refresh.
    async observe({ resource }: { resource: Resource }) {
      const file = fileOf(resource);
      try {
        const [text, info] = await Promise.all([readFile(file, 'utf8'), stat(file)]);
        const mode = \`0\${(info.mode & 0o777).toString(8).padStart(3, '0')}\`;
        return { exists: true, configs: { text, mode }, output: { path: file, bytes: Buffer.byteLength(text) } };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { exists: false };
        throw err;
      }
    },
  });
`;
