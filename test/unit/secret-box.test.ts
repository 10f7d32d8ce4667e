import { randomBytes } from 'node:crypto';

import type { Resource } from '../../src/core/model.js';
import { createResourceSecrets } from '../../src/core/secrets/sealed-resources.js';
import {
  createSecretBox,
  isSealed,
  keyIdOf,
  parseSecretKey,
  sealedKeyId,
  UnreadableSecretError,
} from '../../src/core/secrets/secret-box.js';
import { redact } from '../../src/core/secrets/secrets.js';
import { requireReadable } from '../../src/core/secrets/unreadable-secrets.js';

const key = () => randomBytes(32).toString('base64');
const PLACE = 'orn:steward:vault:p:v#/spec/configs/password';

describe('the secret box', () => {
  it('seals with a fresh IV each time, names its key, and opens only for the same place', () => {
    const k = key();
    const box = createSecretBox(k);
    const a = box.seal('"hunter2"', PLACE);
    const b = box.seal('"hunter2"', PLACE);
    expect(a).not.toBe(b);
    expect(a).toMatch(
      /^\$sealed:v1:[0-9a-f]{8}:[A-Za-z0-9+/]{16}:[A-Za-z0-9+/=]+:[A-Za-z0-9+/]{22}==$/,
    );
    expect(isSealed(a)).toBe(true);
    expect(sealedKeyId(a)).toBe(keyIdOf(parseSecretKey(k)));
    expect(a).not.toContain('hunter2');
    expect(box.open(a, PLACE)).toBe('"hunter2"');
    expect(() => box.open(a, 'orn:steward:vault:p:other#/spec/configs/password')).toThrow(
      /it was altered, or it was sealed for another resource or field/,
    );
    expect(() => box.open(a, 'orn:steward:vault:p:v#/spec/configs/pin')).toThrow(
      UnreadableSecretError,
    );
  });

  it('opens with previous keys, and names an unknown key without showing the value', () => {
    const old = key();
    const sealed = createSecretBox(old).seal('"x"', PLACE);
    expect(createSecretBox(key(), [old]).open(sealed, PLACE)).toBe('"x"');
    const id = sealedKeyId(sealed)!;
    expect(() => createSecretBox(key()).open(sealed, PLACE)).toThrow(
      `it is sealed with key ${id}, which is neither STEWARD_SECRET_KEY nor in STEWARD_SECRET_KEYS_PREVIOUS`,
    );
    expect(() => createSecretBox(undefined).open(sealed, PLACE)).toThrow(
      `it is sealed with key ${id}, and STEWARD_SECRET_KEY is not set`,
    );
    expect(() => createSecretBox(undefined).seal('"x"', PLACE)).toThrow('no STEWARD_SECRET_KEY');
    expect(() => createSecretBox(old).open('$sealed:v1:nonsense', PLACE)).toThrow(
      'it is not a well-formed sealed value',
    );
  });

  it('takes exactly 32 bytes of canonical base64 for a key, and never repeats it in an error', () => {
    expect(parseSecretKey(` ${Buffer.alloc(32, 7).toString('base64')}\n`)).toEqual(
      Buffer.alloc(32, 7),
    );
    for (const [bad, why] of [
      ['', 'not base64'],
      ['not a key at all!', 'not base64'],
      [Buffer.alloc(16).toString('base64'), 'decodes to 16 bytes'],
      [Buffer.alloc(33).toString('base64'), 'decodes to 33 bytes'],
      [Buffer.alloc(32).toString('base64url').replace(/A/g, '_'), 'not base64'],
    ] as const) {
      expect(() => parseSecretKey(bad)).toThrow(why);
      try {
        parseSecretKey(bad);
      } catch (err) {
        if (bad.length > 3) expect((err as Error).message).not.toContain(bad);
      }
    }
  });
});

describe('sealed resources', () => {
  const schemas = {
    configSchema: {
      type: 'object',
      properties: {
        password: { type: 'string', writeOnly: true },
        env: { type: 'object', additionalProperties: { type: 'string', writeOnly: true } },
        list: { type: 'array', items: { type: 'string', writeOnly: true } },
        plain: {},
      },
    },
    outputSchema: {
      type: 'object',
      properties: { token: { type: 'string', writeOnly: true }, host: { type: 'string' } },
    },
  };
  const resource = (configs: Record<string, unknown>, output: Record<string, unknown> = {}) =>
    ({
      urn: 'orn:steward:vault:p:v',
      kind: 'vault',
      spec: { configs, dependencies: {} },
      state: { output },
    }) as unknown as Resource;
  const secretsWith = (box = createSecretBox(key())) =>
    createResourceSecrets(box, (kind) => (kind === 'vault' ? schemas : undefined));

  it('seals every writeOnly value, at any depth, and opens them back', () => {
    const secrets = secretsWith();
    const plain = resource(
      { password: 'p', env: { A: 'a', B: 'b' }, list: ['x', 'y'], plain: 'visible' },
      { token: { nested: true }, host: 'h' },
    );
    const sealed = secrets.seal(plain);
    expect(sealed.spec.configs).toEqual({
      password: expect.stringMatching(/^\$sealed:/),
      env: { A: expect.stringMatching(/^\$sealed:/), B: expect.stringMatching(/^\$sealed:/) },
      list: [expect.stringMatching(/^\$sealed:/), expect.stringMatching(/^\$sealed:/)],
      plain: 'visible',
    });
    expect(sealed.state.output).toEqual({ token: expect.stringMatching(/^\$sealed:/), host: 'h' });
    expect(plain.spec.configs.password).toBe('p');
    expect(secrets.open(sealed)).toEqual({ resource: plain, unreadable: [] });
    // A view never shows a sealed value, even where the schema says nothing.
    expect(redact({ other: sealed.spec.configs.password, ok: 1 }, undefined)).toEqual({ ok: 1 });
  });

  it('leaves out what does not open, and puts it back at the next write unless replaced', () => {
    const secrets = secretsWith();
    const stored = secrets.seal(resource({ password: 'p', env: { A: 'a' }, plain: 1 }));
    const lost = secretsWith().open(stored);
    expect(lost.resource.spec.configs).toEqual({ env: {}, plain: 1 });
    expect(lost.unreadable.map((u) => [u.pointer, u.reason])).toEqual([
      ['/spec/configs/password', 'unknown_key'],
      ['/spec/configs/env/A', 'unknown_key'],
    ]);
    const kept = secrets.seal(
      {
        ...lost.resource,
        spec: {
          ...lost.resource.spec,
          configs: { ...lost.resource.spec.configs, password: 'new' },
        },
      },
      lost.unreadable,
    );
    expect(kept.spec.configs.env).toEqual(stored.spec.configs.env);
    expect(kept.spec.configs.password).not.toBe(stored.spec.configs.password);
    expect(secrets.open(kept).resource.spec.configs).toEqual({
      password: 'new',
      env: { A: 'a' },
      plain: 1,
    });
    expect(() => requireReadable(lost.unreadable)).toThrow(
      'cannot open the secrets the module needs: secret /spec/configs/password of orn:steward:vault:p:v: it is sealed with key',
    );
  });

  it('re-seals older keys and plaintext with the current key, and counts what it did', () => {
    const old = key();
    const current = key();
    const before = createResourceSecrets(createSecretBox(old), () => schemas).seal(
      resource({ password: 'p' }, { token: 't' }),
    );
    const mixed = {
      ...before,
      spec: { ...before.spec, configs: { ...before.spec.configs, env: { A: 'plain' } } },
    };
    const secrets = createResourceSecrets(createSecretBox(current, [old]), () => schemas);
    const rotated = secrets.reseal(mixed);
    expect([rotated.resealed, rotated.sealed, rotated.current, rotated.unreadable]).toEqual([
      2,
      1,
      0,
      [],
    ]);
    const id = keyIdOf(parseSecretKey(current));
    expect(
      [
        rotated.resource.spec.configs.password,
        (rotated.resource.spec.configs.env as Record<string, string>).A,
        rotated.resource.state.output.token,
      ].map((v) => sealedKeyId(String(v))),
    ).toEqual([id, id, id]);
    expect(
      createResourceSecrets(createSecretBox(current), () => schemas).open(rotated.resource).resource
        .spec.configs,
    ).toEqual({ password: 'p', env: { A: 'plain' } });
    expect(secrets.reseal(rotated.resource)).toMatchObject({ resealed: 0, sealed: 0, current: 3 });
  });
});
