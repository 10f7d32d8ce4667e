import { createHmac } from 'node:crypto';

import { signatureHeader } from '../../src/core/webhooks/signature.js';
import { createTargetGuard } from '../../src/core/webhooks/target-guard.js';

/** The webhook address rules (docs/webhooks.md, "Addresses") with DNS answers injected. */
describe('webhook target guard', () => {
  const answers: Record<string, string[]> = {
    'public.example': ['93.184.216.34'],
    'inside.example': ['10.0.0.7'],
    'mixed.example': ['93.184.216.34', '192.168.1.1'],
    'hooks.internal': ['172.16.0.9'],
    'v6.example': ['2606:2800:220:1::1'],
  };
  const resolve = (host: string) =>
    Promise.resolve(
      (answers[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );

  it('refuses a name any of whose addresses is private, and passes public ones', async () => {
    const guard = createTargetGuard([], resolve);
    expect(await guard.refusal('https://public.example/hook')).toBeNull();
    expect(await guard.refusal('https://v6.example/hook')).toBeNull();
    expect(await guard.refusal('https://inside.example/hook')).toMatch(/10\.0\.0\.7 is a private/);
    expect(await guard.refusal('https://mixed.example/hook')).toMatch(/192\.168\.1\.1/);
    expect(await guard.refusal('https://nowhere.example/')).toMatch(/has no address/);
    expect(await guard.refusal('http://100.100.100.200/')).toMatch(/metadata/);
    expect(await guard.refusal('http://[fe80::1]/')).toMatch(/link-local/);
  });

  it('lets STEWARD_WEBHOOK_ALLOW name a host or a CIDR', async () => {
    const guard = createTargetGuard(['hooks.internal', '10.0.0.0/8', '::1'], resolve);
    expect(await guard.refusal('http://hooks.internal/')).toBeNull();
    expect(await guard.refusal('http://inside.example/')).toBeNull();
    expect(await guard.refusal('http://[::1]:8080/')).toBeNull();
    expect(await guard.refusal('http://127.0.0.1/')).toMatch(/loopback/);
  });

  it('checks again in the connection lookup, so a name that now answers privately is not connected to', async () => {
    let calls = 0;
    const rebinding = () => {
      calls += 1;
      return Promise.resolve([{ address: calls === 1 ? '93.184.216.34' : '127.0.0.1', family: 4 }]);
    };
    const guard = createTargetGuard([], rebinding);
    expect(await guard.refusal('http://rebind.example/')).toBeNull();
    const error = await new Promise<Error | null>((done) =>
      guard.lookup('rebind.example', {}, (err) => done(err)),
    );
    expect(error?.message).toMatch(/127\.0\.0\.1 is a loopback/);
  });

  it('signs t.body with HMAC-SHA256 as Stripe does', () => {
    const header = signatureHeader('s3cret', '{"id":1}', 1_774_699_200_999);
    const expected = createHmac('sha256', 's3cret').update('1774699200.{"id":1}').digest('hex');
    expect(header).toBe(`t=1774699200,v1=${expected}`);
  });
});
