import { describeEachDialect } from '../helpers/dialects.js';
import { type FakeSteward, startFakeSteward, urnOf } from '../helpers/fake-steward.js';
import { call } from '../helpers/harness.js';

/** GET /resources (docs/design.md §8): URN order, opaque page tokens, and the project, kind, status and label filters. */
describeEachDialect('listing resources', () => {
  let s: FakeSteward;
  // Created out of order, in two projects and two kinds; zeta fails, beta is still PENDING.
  const resources: Array<{
    name: string;
    kind: string;
    project: string;
    labels: Record<string, string>;
  }> = [
    { name: 'zeta', kind: 'fake', project: 'p', labels: { team: 'a', tier: 'web' } },
    { name: 'alpha', kind: 'fake', project: 'p', labels: { team: 'a', tier: 'db' } },
    { name: 'mid', kind: 'other', project: 'p', labels: { team: 'b' } },
    { name: 'beta', kind: 'fake', project: 'q', labels: { team: 'a', tier: 'web' } },
    { name: 'gamma', kind: 'fake', project: 'p', labels: {} },
    { name: 'delta', kind: 'other', project: 'q', labels: { team: 'b', tier: 'web' } },
    { name: 'eta', kind: 'fake', project: 'p', labels: { team: 'c' } },
  ];
  const urns = resources.map((r) => urnOf(r.name, r.kind, r.project));
  const sorted = [...urns].sort();

  beforeAll(async () => {
    s = await startFakeSteward({ kinds: [{ kind: 'other' }] });
    s.next(urnOf('zeta'), { type: 'terminal', message: 'no' });
    for (const r of resources.filter((r) => r.name !== 'beta')) {
      expect(
        (await s.create(r.name, {}, { kind: r.kind, project: r.project, labels: r.labels })).status,
      ).toBe(202);
    }
    await s.drain();
    const beta = resources.find((r) => r.name === 'beta')!;
    expect((await s.create(beta.name, {}, beta)).status).toBe(202);
  });
  afterAll(() => s.close());

  const list = async (query: string) => {
    const res = await call('GET', `${s.api}/resources?${query}`);
    expect(res.status).toBe(200);
    return res.body as { resources: Array<{ urn: string }>; next_page_token: string | null };
  };
  const urnsOf = async (query: string) => (await list(query)).resources.map((r) => r.urn);

  it('lists everything in URN order by default, with no next page', async () => {
    const page = await list('');
    expect(page.resources.map((r) => r.urn)).toEqual(sorted);
    expect(page.next_page_token).toBeNull();
  });

  it('page_size=3 follows next_page_token to the end in URN order', async () => {
    const pages: string[][] = [];
    let token: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof list>> = await list(
        `page_size=3${token ? `&page_token=${encodeURIComponent(token)}` : ''}`,
      );
      pages.push(page.resources.map((r) => r.urn));
      token = page.next_page_token;
    } while (token && pages.length < 10);
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(pages.flat()).toEqual(sorted);
  });

  it('a page that ends exactly at the last resource has no next token', async () => {
    const first = await list('page_size=4');
    expect(first.next_page_token).not.toBeNull();
    const second = await list(`page_size=3&page_token=${first.next_page_token}`);
    expect(second.resources.map((r) => r.urn)).toEqual(sorted.slice(4));
    expect(second.next_page_token).toBeNull();
  });

  it('page tokens carry the filters the caller repeats', async () => {
    const first = await list('project=p&page_size=2');
    const second = await list(`project=p&page_size=2&page_token=${first.next_page_token}`);
    const inP = sorted.filter((urn) => urn.split(':')[3] === 'p');
    expect([...first.resources, ...second.resources].map((r) => r.urn)).toEqual(inP.slice(0, 4));
  });

  it.each([
    ['labels=team=a', ['alpha', 'beta', 'zeta']],
    ['labels=team=a,tier=web', ['beta', 'zeta']],
    ['labels=tier=web', ['beta', 'delta', 'zeta']],
    ['labels=team=nobody', []],
    ['project=q', ['beta', 'delta']],
    ['kind=other', ['delta', 'mid']],
    ['kind=fake&project=p', ['alpha', 'eta', 'gamma', 'zeta']],
    ['status=ERROR', ['zeta']],
    ['status=PENDING', ['beta']],
    ['status=COMPLETED&kind=fake', ['alpha', 'eta', 'gamma']],
    ['status=COMPLETED&labels=team=b&project=q', ['delta']],
    ['project=nobody', []],
  ])('filter %s', async (query, names) => {
    const expected = sorted.filter((urn) => names.includes(urn.split(':').pop()!));
    expect(await urnsOf(query)).toEqual(expected);
  });

  // A typo is a 400, as status=bogus is, never a silently empty page; a valid project with nothing is 200 [] (above).
  it.each(['kind=nope', 'project=Alpha', 'project=', 'kind=', 'labels=', 'labels=a b=1'])(
    'filter %s → 400',
    async (query) => {
      const res = await call('GET', `${s.api}/resources?${query}`);
      expect([res.status, res.body.error.code]).toEqual([400, 'invalid_request']);
    },
  );

  it('each listed resource is the same document as GET returns', async () => {
    const page = await list('status=ERROR');
    expect(page.resources).toEqual([(await s.get(urnOf('zeta'))).body]);
    expect(page.resources[0]).toMatchObject({
      state: { status: 'ERROR', sync: { last_error: 'no' } },
    });
  });
});
