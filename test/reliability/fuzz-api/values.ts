import fc from 'fast-check';

/**
 * The building blocks of fuzzed requests: wire-level path pieces, names, URNs, page
 * tokens and JSON values that are near the edges the API checks.
 */

/** Percent-encodes every UTF-8 byte outside `!`…`~` and leaves the rest (`%`, `/`, `?`, `#` too) as it is. */
export function rawEncode(text: string): string {
  return Array.from(text)
    .map((ch) =>
      /^[\x21-\x7e]$/.test(ch)
        ? ch
        : [...Buffer.from(ch, 'utf8')]
            .map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)
            .join(''),
    )
    .join('');
}

/** Encodes every character, unreserved ones too, in upper- or lower-case hex. */
function encodeAll(text: string, lower: boolean): string {
  const hex = [...Buffer.from(text, 'utf8')]
    .map((byte) => `%${byte.toString(16).padStart(2, '0')}`)
    .join('');
  return lower ? hex : hex.toUpperCase();
}

/** What node:http can put on a request line: `!`…`ÿ`; anything else is percent-encoded. */
export function sendable(path: string): string {
  return Array.from(path)
    .map((ch) => (/^[\x21-\xff]$/.test(ch) ? ch : rawEncode(ch)))
    .join('');
}

/** Header values node:http will send (tab, printable ASCII and latin-1 bytes). */
export function headerSafe(value: string): string {
  return value.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');
}

/** Path and query pieces that parsers trip on: bad percent-encoding, overlong UTF-8, dots, slashes, separators. */
export const WIRE_PIECES = [
  '%C0%AF',
  '%FF',
  '%',
  '%E0%A4%A',
  '%00',
  '%2F',
  '%2f',
  '..',
  '.',
  '/',
  '//',
  '%2e%2e',
  '%2E',
  '%252F',
  ':',
  '%3A',
  '%3a',
  '\\',
  '%5C',
  ';',
  '@',
  '&',
  '=',
  '+',
  ',',
  '!',
  '*',
  "'",
  '(',
  ')',
  '~',
  '$',
  '%ZZ',
  '%u0041',
  '%C3%28',
  '%ED%A0%80',
  '%F4%90%80%80',
  '%EF%BB%BF',
  '?',
  '#',
  '%23',
  '%3F',
  '\xff',
  '\xc0\xaf',
  '%20',
  '%0A',
  '%0D%0A',
  '[]',
  '[0]',
  '%5B%5D',
];

export const STRANGE_STRINGS = [
  '\u0000',
  '\ud800',
  '\udfff',
  '\uffff',
  '\ufeff',
  '\u202e',
  '𝕏',
  'é',
  'e\u0301',
  '\n\r\t',
  '"',
  '\\',
  '</script>',
  '\u2028',
  'ǅ',
  'İ',
  '０',
];

export const wirePiece = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...WIRE_PIECES) },
  { weight: 2, arbitrary: fc.string({ maxLength: 8 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }).map(rawEncode) },
  { weight: 1, arbitrary: fc.constantFrom(...STRANGE_STRINGS).map(rawEncode) },
);

/** Strings that match the name pattern, and strings that almost do. */
export const nameLike = fc.oneof(
  { weight: 3, arbitrary: fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,62}$/) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'p',
      'existing',
      'talker',
      'P',
      '-a',
      '_a',
      'a'.repeat(63),
      'a'.repeat(64),
      '',
      '..',
      'a/b',
      'a:b',
      'a b',
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
);

/** A value placed in a body that becomes `depth` nested arrays or objects once the body is text (see `bodyText`). */
export const deepMarker = (depth: number, shape: 'array' | 'object') =>
  `@@deep:${depth}:${shape}@@`;

/** JSON text of `value`, with every deep marker expanded (a million levels cannot be built and stringified as objects). */
export function bodyText(value: unknown): string {
  const text = JSON.stringify(value) ?? 'null';
  return text.replace(/"@@deep:(\d+):(array|object)@@"/g, (_all, depth: string, shape: string) => {
    const n = Number(depth);
    return shape === 'array'
      ? `${'['.repeat(n)}${']'.repeat(n)}`
      : `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
  });
}

export const deepValue = fc
  .tuple(
    fc.constantFrom(3, 30, 100, 1000, 5000, 20_000, 150_000),
    fc.constantFrom<'array' | 'object'>('array', 'object'),
  )
  .map(([depth, shape]) => deepMarker(depth, shape));

/** Values of the wrong type, strange strings, huge strings and deep nesting, besides any JSON value. */
export const edgyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      null,
      true,
      false,
      0,
      -1,
      1.5,
      1e308,
      -1e-308,
      2 ** 53,
      '',
      'x',
      [],
      {},
      [[]],
      { a: {} },
    ),
  },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.constantFrom(...STRANGE_STRINGS) },
  { weight: 1, arbitrary: fc.constantFrom(256, 4096, 70_000, 300_000).map((n) => 'x'.repeat(n)) },
  { weight: 1, arbitrary: deepValue },
);

/** Object keys: the ones the API knows, prototype-polluting ones, and junk. */
export const edgyKey = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '__proto__',
      'constructor',
      'prototype',
      'kind',
      'project',
      'name',
      'labels',
      'spec',
      'configs',
      'dependencies',
      'action',
      'params',
      'by',
      'value',
      'steps',
      'password',
      'parent',
      'extra',
      '',
      'toString',
      'hasOwnProperty',
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 10 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 70 }) },
);

/** base64url of `{s, a}` with a scope from the API's listings and any `a`; or junk. */
export function pageTokenOf(urns: readonly string[]): fc.Arbitrary<string> {
  const scope = fc.oneof(
    fc.constantFrom(
      'resources',
      'operations',
      'schedules',
      ...urns.map((urn) => `revisions:${urn}`),
    ),
    fc.string({ maxLength: 12 }),
  );
  const after = fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom(0, -1, 1.5, 1e300, 2 ** 63, '', '\u0000', 'zzzz', 'op_', 'sch_'),
    fc.string({ unit: 'binary', maxLength: 20 }),
  );
  const token = fc
    .tuple(scope, after)
    .map(([s, a]) => Buffer.from(JSON.stringify({ s, a })).toString('base64url'));
  const bigNumber = fc
    .constantFrom('1e400', '-1e400', '1e-400', '123456789012345678901234567890')
    .map((a) => Buffer.from(`{"s":"resources","a":${a}}`).toString('base64url'));
  return fc.oneof(
    { weight: 3, arbitrary: token },
    { weight: 1, arbitrary: bigNumber },
    { weight: 1, arbitrary: fc.base64String({ maxLength: 40 }) },
    { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
  );
}

/** URNs as they go on the wire: seeded ones (raw, encoded, mutated), well-shaped ones, junk, very long ones. */
export function wireUrn(urns: readonly string[], kinds: readonly string[]): fc.Arbitrary<string> {
  const seeded = fc.constantFrom(...urns);
  const shaped = fc
    .tuple(fc.oneof(fc.constantFrom(...kinds), nameLike), nameLike, nameLike)
    .map(([kind, project, name]) => rawEncode(`orn:steward:${kind}:${project}:${name}`));
  const mutated = fc.tuple(seeded, fc.nat(), fc.nat(3), wirePiece).map(([urn, at, op, piece]) => {
    const i = at % (urn.length + 1);
    if (op === 0) return urn.slice(0, i) + piece + urn.slice(i);
    if (op === 1) return urn.slice(0, i) + piece + urn.slice(i + 1);
    if (op === 2) return urn.toUpperCase();
    return `${urn}${piece}`;
  });
  return fc.oneof(
    { weight: 6, arbitrary: seeded },
    {
      weight: 1,
      arbitrary: fc
        .tuple(seeded, fc.boolean())
        .map(([urn, lower]) => (lower ? encodeURIComponent(urn) : encodeAll(urn, false))),
    },
    { weight: 1, arbitrary: seeded.map((urn) => encodeAll(urn, true)) },
    { weight: 2, arbitrary: shaped },
    { weight: 3, arbitrary: mutated },
    {
      weight: 2,
      arbitrary: fc
        .array(wirePiece, { minLength: 1, maxLength: 6 })
        .map((pieces) => pieces.join('')),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(300, 2000, 9000, 17_000, 70_000)
        .map((n) => `orn:steward:fake:p:${'a'.repeat(n)}`),
    },
  );
}
