import { redactUrl } from '../../src/store/create-store.js';

/** STEWARD_DB as it may be logged (start-up line, migration failure): no password in any of its places. */
describe('redactUrl', () => {
  it.each([
    [
      'postgres://steward:s3cret@db:5432/steward',
      'postgres://steward:***@db:5432/steward',
      's3cret',
    ],
    // An unescaped @ in the password: the old pattern stopped at the first @ and showed the rest.
    ['postgres://steward:p@ss@db:5432/steward', 'postgres://steward:***@db:5432/steward', 'ss@db'],
    ['postgresql://steward:p%40ss%3Aw@db/steward', 'postgresql://steward:***@db/steward', 'p%40ss'],
    [
      'postgres://db/steward?user=steward&password=s3cret',
      'postgres://db/steward?user=steward&password=***',
      's3cret',
    ],
    [
      'postgres://db/steward?PASSWORD=s3cret&sslmode=require',
      'postgres://db/steward?PASSWORD=***&sslmode=require',
      's3cret',
    ],
    [
      'postgres://db/steward?sslpassword=keypass&sslkey=/etc/steward/client.key&sslcert=/c.crt',
      'postgres://db/steward?sslpassword=***&sslkey=***&sslcert=%2Fc.crt',
      'keypass',
    ],
    ['postgres://u:one@db/steward?password=two', 'postgres://u:***@db/steward?password=***', 'two'],
  ])('%s', (url, shown, secret) => {
    expect(redactUrl(url)).toBe(shown);
    expect(redactUrl(url)).not.toContain(secret);
  });

  it('leaves a URL without a password and a SQLite path as they are', () => {
    expect(redactUrl('postgres://steward@db/steward')).toBe('postgres://steward@db/steward');
    expect(redactUrl('./data/steward.db')).toBe('./data/steward.db');
    expect(redactUrl(':memory:')).toBe(':memory:');
  });

  it('shows nothing of a URL that does not parse (its password could be anywhere in it)', () => {
    expect(redactUrl('postgres://u:pa/ss:word@db/steward')).toBe(
      'postgres://*** (a URL that does not parse)',
    );
  });
});
