import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';

import { parseAllDocuments } from 'yaml';

import { CliError, EXIT } from './cli-error.js';
import { readAll } from './input.js';

/** One resource document of an apply: the PUT body, where it came from, and what it depends on. */
export interface Manifest {
  /** `file` or `file#2` (the second document of the file), for messages. */
  where: string;
  urn: string;
  body: Record<string, unknown>;
  /** The URNs of its dependencies (`spec.dependencies` or the flat form's `dependencies`). */
  dependsOn: string[];
}

const MANIFEST_EXTENSIONS: ReadonlySet<string> = new Set(['.yaml', '.yml', '.json']);

/**
 * `-f FILE|DIR|-`: every document of the file (YAML or JSON; several YAML documents split by
 * `---`), of stdin, or of each *.yaml, *.yml and *.json file directly in the directory (in name
 * order: the order of the documents does not matter, apply orders them by their dependencies).
 * Empty documents are skipped; anything unreadable is an error before anything is sent.
 */
export async function readManifests(
  path: string,
  stdin: NodeJS.ReadableStream = process.stdin,
): Promise<Manifest[]> {
  const manifests: Manifest[] = [];
  for (const [where, text] of await sourcesOf(path, stdin))
    manifests.push(...parseManifests(text, where));
  if (manifests.length === 0) throw new CliError(`${path} holds no documents`, EXIT.usage);
  const seen = new Map<string, string>();
  for (const manifest of manifests) {
    const first = seen.get(manifest.urn);
    if (first)
      throw new CliError(
        `${manifest.urn} is given twice: in ${first} and in ${manifest.where}`,
        EXIT.usage,
      );
    seen.set(manifest.urn, manifest.where);
  }
  return manifests;
}

/** The documents of one text: each an object naming its kind, project (or parent) and name. */
export function parseManifests(text: string, where: string): Manifest[] {
  const documents = parseAllDocuments(text);
  if (!Array.isArray(documents))
    throw new CliError(`${where} is neither JSON nor YAML`, EXIT.usage);
  const manifests: Manifest[] = [];
  documents.forEach((document, index) => {
    const at = documents.length > 1 ? `${where}#${index + 1}` : where;
    if (document.errors.length > 0)
      throw new CliError(
        `${at} is neither JSON nor YAML: ${document.errors[0]!.message}`,
        EXIT.usage,
      );
    const value: unknown = document.toJS();
    if (value === null || value === undefined) return;
    if (typeof value !== 'object' || Array.isArray(value))
      throw new CliError(`${at} must hold an object (a resource)`, EXIT.usage);
    manifests.push(manifestOf(value as Record<string, unknown>, at));
  });
  return manifests;
}

function manifestOf(body: Record<string, unknown>, where: string): Manifest {
  const project = body.project ?? body.parent;
  const identity = { kind: body.kind, project, name: body.name };
  for (const [field, value] of Object.entries(identity))
    if (typeof value !== 'string' || value === '')
      throw new CliError(
        `${where} has no ${field === 'project' ? 'project (or parent)' : field}: a document names its resource`,
        EXIT.usage,
      );
  const spec = body.spec as { dependencies?: unknown } | undefined;
  const dependencies = spec?.dependencies ?? body.dependencies ?? {};
  const dependsOn =
    typeof dependencies === 'object' && dependencies !== null
      ? Object.values(dependencies).filter((urn): urn is string => typeof urn === 'string')
      : [];
  return {
    where,
    urn: `orn:steward:${String(identity.kind)}:${String(project)}:${String(identity.name)}`,
    body,
    dependsOn: [...new Set(dependsOn)],
  };
}

/** [where, text] of each source: stdin, the file, or the directory's manifest files. */
async function sourcesOf(
  path: string,
  stdin: NodeJS.ReadableStream,
): Promise<Array<[string, string]>> {
  try {
    if (path === '-') return [['stdin', await readAll(stdin)]];
    if (!(await stat(path)).isDirectory()) return [[path, await readFile(path, 'utf8')]];
    const entries = await readdir(path, { withFileTypes: true });
    const files = entries
      .filter((entry) => entry.isFile() && MANIFEST_EXTENSIONS.has(extname(entry.name)))
      .map((entry) => join(path, entry.name))
      .sort();
    return Promise.all(
      files.map(async (file): Promise<[string, string]> => [file, await readFile(file, 'utf8')]),
    );
  } catch (err) {
    throw new CliError(
      `cannot read ${path === '-' ? 'stdin' : path}: ${(err as Error).message}`,
      EXIT.usage,
    );
  }
}
