import { deepFreeze, frozenCopy } from '../../src/core/json.js';

describe('frozenCopy', () => {
  const document = {
    urn: 'urn:steward:demo:noop:a',
    spec: { configs: { n: 1, list: [1, { deep: 'x' }], none: null, gone: undefined } },
    state: { status: 'COMPLETED', data: {} },
  };

  it('gives what deepFreeze(structuredClone(value)) gives, and leaves the original alone', () => {
    const copy = frozenCopy(document);
    expect(copy).toStrictEqual(deepFreeze(structuredClone(document)));
    expect(copy).not.toBe(document);
    expect(copy.spec.configs.list).not.toBe(document.spec.configs.list);
    expect(Object.isFrozen(document)).toBe(false);
    expect(Object.isFrozen(document.spec.configs.list[1])).toBe(false);
  });

  it('freezes every level of the copy', () => {
    const copy = frozenCopy(document);
    expect(Object.isFrozen(copy)).toBe(true);
    expect(Object.isFrozen(copy.spec.configs)).toBe(true);
    expect(Object.isFrozen(copy.spec.configs.list)).toBe(true);
    expect(Object.isFrozen(copy.spec.configs.list[1])).toBe(true);
    expect(() => {
      (copy.spec.configs as Record<string, unknown>).n = 2;
    }).toThrow(TypeError);
  });

  it('copies what is not plain JSON as structuredClone does (a Date stays a Date)', () => {
    const at = new Date('2026-11-27T02:00:00Z');
    const copy = frozenCopy({ at, map: new Map([['k', 1]]) });
    // structuredClone makes it in Node's own realm, not jest's: compare by tag, not instanceof.
    expect(Object.prototype.toString.call(copy.at)).toBe('[object Date]');
    expect(copy.at).not.toBe(at);
    expect(copy.at.getTime()).toBe(at.getTime());
    expect(copy.map.get('k')).toBe(1);
    expect(Object.isFrozen(copy.at)).toBe(true);
  });

  it('keeps objects without a prototype and primitives as they are', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 });
    expect(frozenCopy(bare)).toStrictEqual(structuredClone({ a: 1 }));
    expect(frozenCopy('text')).toBe('text');
    expect(frozenCopy(null)).toBe(null);
  });
});
