import type { PostgresTarget } from '../../modules/postgres-server/connection.js';
import { createTargetPolicy, guardTargets } from '../../modules/postgres-server/targets.js';
import { loadConfig } from '../../src/config.js';
import { TerminalError } from '../../src/sdk/index.js';

/** STEWARD_POSTGRES_TARGETS: the entries, and the sync-time resolution of host names (the resolver is injected). */

describe('STEWARD_POSTGRES_TARGETS', () => {
  it('defaults to loopback and refuses entries that are no host, address, CIDR or directory', () => {
    expect(loadConfig({}).postgresTargets).toEqual(['127.0.0.0/8', '::1', 'localhost']);
    expect(
      loadConfig({ STEWARD_POSTGRES_TARGETS: ' 10.0.0.0/8, db.internal ,/run/pg,fd00::/8' })
        .postgresTargets,
    ).toEqual(['10.0.0.0/8', 'db.internal', '/run/pg', 'fd00::/8']);
    expect(() => loadConfig({ STEWARD_POSTGRES_TARGETS: '10.0.0.0/33,a b,10.0.0.0/8/1' })).toThrow(
      /"10.0.0.0\/33" is not a CIDR \(address\/prefix\); "a b" is not a host name, IP address, CIDR or socket directory; "10.0.0.0\/8\/1" is not a CIDR/,
    );
    expect(() => loadConfig({ STEWARD_POSTGRES_TARGETS: ' , ' })).toThrow(
      'must name at least one target',
    );
  });
});

describe('the sync-time check', () => {
  const target: PostgresTarget = {
    host: 'db.example',
    port: 5432,
    user: 'postgres',
    password: 'pw',
    database: 'postgres',
    sslmode: 'prefer',
  };
  const connected: string[] = [];
  const connect = async (t: PostgresTarget) => {
    connected.push(t.host);
    return { query: async () => ({ rows: [] }), end: async () => undefined };
  };
  const lookupAs = (answers: Record<string, string[]>) => async (host: string) =>
    answers[host] ?? [];
  beforeEach(() => connected.splice(0));

  it('connects to the address it checked, so a second lookup cannot answer otherwise (DNS rebinding)', async () => {
    const policy = createTargetPolicy(
      ['10.0.0.0/8'],
      lookupAs({ 'db.example': ['10.1.2.3', '10.1.2.4'] }),
    );
    await guardTargets(policy, connect)(target);
    expect(connected).toEqual(['10.1.2.3']);
  });

  it('refuses a name with any address outside the list, or with none, as a TerminalError, without connecting', async () => {
    for (const addresses of [['10.1.2.3', '169.254.169.254'], ['127.0.0.1'], []]) {
      const policy = createTargetPolicy(['10.0.0.0/8'], lookupAs({ 'db.example': addresses }));
      await expect(guardTargets(policy, connect)(target)).rejects.toThrow(TerminalError);
    }
    expect(connected).toEqual([]);
  });

  it('uses a listed name as it is, without resolving it', async () => {
    const policy = createTargetPolicy(['DB.example.'], () =>
      Promise.reject(new Error('must not resolve')),
    );
    await guardTargets(policy, connect)(target);
    expect(connected).toEqual(['db.example']);
  });

  it('refuses at plan a name that no address entry could let through', () => {
    expect(createTargetPolicy(['db.internal', '/run/pg']).refusal('db.example')).toBe(
      'host "db.example" is not an allowed PostgreSQL target (STEWARD_POSTGRES_TARGETS)',
    );
    expect(createTargetPolicy(['db.internal', '/run/pg']).refusal('/run/pg/')).toBeUndefined();
  });
});
