import type { ObserveResult } from '../../src/sdk/index.js';
import { checkMembers, isObject, ProtocolError } from './protocol.js';

/** Checks a 200 answer of /observe and maps it to an `ObserveResult`. */
export function observeResultFromWire(where: string, body: unknown): ObserveResult {
  if (!isObject(body)) throw new ProtocolError(where, 'the observe answer must be a JSON object');
  checkMembers(where, 'the observe answer', body, ['exists', 'configs', 'output', 'data']);
  if (typeof body.exists !== 'boolean')
    throw new ProtocolError(
      where,
      `exists must be true or false, got ${JSON.stringify(body.exists) ?? 'nothing'}`,
    );
  if (body.configs != null && !isObject(body.configs))
    throw new ProtocolError(where, 'configs must be an object');
  if (body.output != null && !isObject(body.output))
    throw new ProtocolError(where, 'output must be an object');
  if (!body.exists && (body.configs != null || body.output != null || body.data !== undefined))
    throw new ProtocolError(where, 'an answer with exists: false must have nothing else');
  const result: ObserveResult = { exists: body.exists };
  if (body.configs != null) result.configs = body.configs as Record<string, unknown>;
  if (body.output != null) result.output = body.output as Record<string, unknown>;
  if (body.data !== undefined) result.data = body.data;
  return result;
}
