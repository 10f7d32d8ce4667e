import { readFile } from 'node:fs/promises';

import { parseAllDocuments } from 'yaml';

import { CliError, EXIT } from './cli-error.js';

/**
 * Reads one JSON or YAML document from a file, or from stdin for `-`.
 * YAML is a superset of JSON, so one parser reads both; a file with several
 * YAML documents, or whose top level is not an object, is refused.
 */
export async function readDocument(
  file: string,
  stdin: NodeJS.ReadableStream = process.stdin,
): Promise<Record<string, unknown>> {
  const where = file === '-' ? 'stdin' : file;
  let text: string;
  try {
    text = file === '-' ? await readAll(stdin) : await readFile(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${where}: ${(err as Error).message}`, EXIT.usage);
  }
  return parseDocument(text, where);
}

export function parseDocument(text: string, where: string): Record<string, unknown> {
  const documents = parseAllDocuments(text);
  if (!Array.isArray(documents) || documents.length === 0)
    throw new CliError(`${where} is empty`, EXIT.usage);
  if (documents.length > 1)
    throw new CliError(
      `${where} holds ${documents.length} documents; give one resource per file`,
      EXIT.usage,
    );
  const [document] = documents;
  if (document!.errors.length > 0)
    throw new CliError(
      `${where} is neither JSON nor YAML: ${document!.errors[0]!.message}`,
      EXIT.usage,
    );
  const value: unknown = document!.toJS();
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new CliError(`${where} must hold an object`, EXIT.usage);
  return value as Record<string, unknown>;
}

/** `--params '{"mode":"0600"}'`: a JSON object. */
export function parseJsonObject(text: string, option: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CliError(`${option} is not valid JSON: ${(err as Error).message}`, EXIT.usage);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new CliError(`${option} must be a JSON object`, EXIT.usage);
  return value as Record<string, unknown>;
}

/**
 * `--params '{"times":2}'`, or `--params @params.yaml` (`@-`: stdin): a JSON object given inline,
 * or a JSON or YAML file holding one.
 */
export async function readObjectOption(
  text: string,
  option: string,
  stdin: NodeJS.ReadableStream = process.stdin,
): Promise<Record<string, unknown>> {
  return text.startsWith('@') ? readDocument(text.slice(1), stdin) : parseJsonObject(text, option);
}

export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}
