/** The files every language's scaffold shares: examples for the kit, .gitignore, README. */
export type Lang = 'js' | 'ts' | 'python';

/** The kit's example resource and the params of its actions (src/contract/examples.ts). */
export const EXAMPLE = `{
  "project": "demo",
  "name": "hello",
  "spec": { "configs": { "text": "hello\\n", "mode": "0644" } }
}
`;
export const EXAMPLE_ACTIONS = `{
  "append": { "line": "one more line" },
  "update": { "configs": { "text": "hello again\\n", "mode": "0600" } }
}
`;

export const GITIGNORE = `.steward/\nnode_modules/\n__pycache__/\n`;

export function packageJson(kind: string, lang: 'js' | 'ts'): string {
  const json = {
    name: kind.replace(/_/g, '-'),
    version: '0.1.0',
    private: true,
    description: `The Steward module of kind ${kind}.`,
    scripts: {
      test: 'steward module test .',
      dev: 'steward module dev .',
      ...(lang === 'ts' && { typecheck: 'tsc --noEmit --strict --types node index.ts' }),
    },
    ...(lang === 'ts' && { devDependencies: { typescript: '^5.9.0', '@types/node': '^20.0.0' } }),
  };
  return `${JSON.stringify(json, null, 2)}\n`;
}

const ENTRY: Record<Lang, string> = { js: 'index.js', ts: 'index.ts', python: 'server.py' };

export function readme(kind: string, lang: Lang, dirVar: string): string {
  const entry = ENTRY[lang];
  const run =
    lang === 'python'
      ? `\`\`\`sh
steward module dev .          # server.py and Steward on http://127.0.0.1:8080, both restarted when a file here changes
\`\`\`

or by hand (\`--dir DIR\`, else \`$${dirVar}\`, says where the files go):

\`\`\`sh
python3 server.py --port 9000 &
STEWARD_HTTP_MODULES=http://127.0.0.1:9000 steward serve
\`\`\``
      : `\`\`\`sh
steward module dev .          # Steward with this module on http://127.0.0.1:8080, restarted when a file here changes
\`\`\`

\`steward module dev\` keeps its SQLite database in \`.steward/\`. To serve the module for good, put this folder in a
directory named by \`STEWARD_MODULE_PATHS\` and run \`steward serve\`.`;
  const test =
    lang === 'python'
      ? `\`\`\`sh
python3 server.py --port 9000 --quiet &
steward module test http://127.0.0.1:9000 --examples examples
\`\`\``
      : `\`\`\`sh
npm test                      # = steward module test .
\`\`\`${lang === 'ts' ? '\n\n`npm install` then `npm run typecheck` checks the types (Steward itself transpiles `index.ts` without checking them).' : ''}`;
  return `# ${kind}

A Steward module of kind \`${kind}\`, made by \`steward module init ${kind} --lang ${lang}\`. As it stands it manages one
text file per resource, \`$${dirVar}/<project>/<name>.txt\` (default: \`steward-${kind}\` in the temporary folder), in
two steps (\`write\`, \`chmod\`), with an extra action (\`append\`) and \`observe\` (so resources can be imported).
It passes Steward's contract kit. Make it yours:

## What to edit (in \`${entry}\`)

- **The schema** (\`${lang === 'python' ? 'config_schema' : 'configSchema'}\`): the configs a resource declares. Mark a secret with \`writeOnly: true\`.
- **The actions**: \`create\`, \`update\` and \`delete\` are required; add your own with a params schema.
- **plan**: pure. It only chooses the steps an action needs (and may change the configs). No I/O, no clock.
- **The steps**: each does one thing to the backend, one step a sync call, and MUST be safe to run twice.
- **output**: what a COMPLETED resource publishes. **observe**: reads the backend and changes nothing.
- **examples/**: \`hello.json\` is a create body the kit runs; \`hello.actions.json\` gives the params of each action
  (\`update\` is a PATCH body). Keep them in step with the schema.

Steward's module guide (docs/modules.md${lang === 'python' ? ', and docs/http-modules.md for the protocol' : ''}) explains each part.

\`steward\` below is Steward's own command: run \`npm link\` once in your Steward checkout to put it on your PATH, or
write \`node <checkout>/bin/steward.js\` instead.

## How to run it

${run}

\`\`\`sh
curl -s -X POST http://127.0.0.1:8080/api/v1beta1/resources -H 'content-type: application/json' \\
  -d '{"kind":"${kind}","project":"demo","name":"hello","spec":{"configs":{"text":"hello\\n"}}}'
steward resource get orn:steward:${kind}:demo:hello
\`\`\`

## How to test it

${test}

The kit creates, updates, runs each action on and deletes every example on a throwaway Steward, and checks that plan is
pure, that each step is idempotent, that secrets stay secret and that \`observe\` agrees with what sync did. It prints one
line per rule with PASS, FAIL or SKIP and the reason, and exits 1 if a rule fails.
`;
}
