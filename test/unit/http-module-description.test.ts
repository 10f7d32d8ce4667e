import { describedModuleFromWire } from '../../modules/http/protocol.js';

/** The description members of issue 13: `has_observe` and `claim_key`, checked when Steward starts. */
const BASE = {
  kind: 'kv_entry',
  description: 'd',
  config_schema: {
    type: 'object',
    properties: { key: { type: 'string' }, token: { type: 'string', writeOnly: true } },
  },
  actions: { create: {}, update: {}, delete: {} },
};
const describe_ = (extra: Record<string, unknown>) =>
  describedModuleFromWire('http module E', { ...BASE, ...extra });

describe('has_observe and claim_key in a description', () => {
  it('maps them: absent or null is no observe and no claim key', () => {
    expect(describe_({})).toMatchObject({ hasObserve: false });
    expect(describe_({ has_observe: null, claim_key: null })).not.toHaveProperty('claimKeyFields');
    expect(describe_({ has_observe: true, claim_key: ['key'] })).toMatchObject({
      hasObserve: true,
      claimKeyFields: ['key'],
    });
  });

  it.each([
    [{ has_observe: 'yes' }, 'has_observe must be a boolean or null'],
    [{ claim_key: 'key' }, 'claim_key must be a non-empty list of distinct config names, or null'],
    [{ claim_key: [] }, 'claim_key must be a non-empty list'],
    [{ claim_key: ['key', 'key'] }, 'claim_key must be a non-empty list of distinct'],
    [{ claim_key: ['nope'] }, 'claim_key names "nope", which config_schema does not define'],
    [{ claim_key: ['token'] }, 'claim_key names "token", a secret (writeOnly)'],
    [{ hasObserve: true }, 'the module description has unknown member "hasObserve"'],
  ])('refuses %j', (extra, message) => {
    expect(() => describe_(extra)).toThrow(`http module E: bad module description: ${message}`);
  });
});
