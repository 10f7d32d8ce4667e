import { hasSecrets, redact } from '../../src/core/secrets/secrets.js';

describe('redact', () => {
  const schema = {
    type: 'object',
    properties: {
      user: { type: 'string' },
      password: { type: 'string', writeOnly: true },
      nested: {
        type: 'object',
        properties: { token: { type: 'string', writeOnly: true }, keep: { type: 'integer' } },
      },
      list: {
        type: 'array',
        items: {
          type: 'object',
          properties: { key: { type: 'string', writeOnly: true }, id: { type: 'string' } },
        },
      },
      env: { type: 'object', additionalProperties: { type: 'string', writeOnly: true } },
    },
  };

  it('removes every writeOnly value, at any depth, and leaves the input untouched', () => {
    const value = {
      user: 'u',
      password: 'p',
      nested: { token: 't', keep: 1 },
      list: [{ key: 'k', id: 'i' }],
      env: { A: 'secret' },
    };
    const copy = structuredClone(value);
    expect(redact(value, schema)).toEqual({
      user: 'u',
      nested: { keep: 1 },
      list: [{ id: 'i' }],
      env: {},
    });
    expect(value).toEqual(copy);
  });

  it('knows whether a schema has secrets at all', () => {
    expect(hasSecrets(schema)).toBe(true);
    expect(hasSecrets({ type: 'object', properties: { a: { type: 'string' } } })).toBe(false);
    expect(hasSecrets(undefined)).toBe(false);
  });
});
