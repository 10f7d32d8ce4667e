import { hotStatementCheck } from '../../src/store/hot-statements.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { type FakeSteward, startFakeSteward, urnOf } from '../helpers/fake-steward.js';
import { call } from '../helpers/harness.js';

/**
 * A list page of resources is read in one statement (queries.ts listResources): rows whose large
 * columns fit the page's share of the byte bound come whole with their sizes; a page holding a
 * row larger than that share reads the rows that fit again, whole. Either way each item is the
 * document GET returns.
 */
describeEachDialect('list page statements', () => {
  // 64 KiB and pages of 10: a row comes inline up to (65,536 - 256) / 11 = 5,934 characters.
  const MAX_PAGE_BYTES = 64 * 1024;
  let s: FakeSteward;
  const small = Array.from({ length: 10 }, (_, i) => `small-${String(i).padStart(2, '0')}`);
  beforeAll(async () => {
    s = await startFakeSteward({ config: { maxPageBytes: MAX_PAGE_BYTES } });
    for (const name of small)
      expect((await s.create(name, { value: name }, { project: 'small' })).status).toBe(202);
    for (const [name, size] of [
      ['mixed-a', 100],
      ['mixed-b', 20 * 1024], // over the inline share, within the page's bound
      ['mixed-c', 100],
    ] as const)
      expect((await s.create(name, { value: 'x'.repeat(size) }, { project: 'mixed' })).status).toBe(
        202,
      );
    await s.drain();
    hotStatementCheck.enabled = true;
  });
  afterAll(async () => {
    hotStatementCheck.enabled = false;
    await s.close();
  });

  async function page(query: string): Promise<{ urns: string[]; next: string | null }> {
    const res = await call('GET', `${s.api}/resources?page_size=10&${query}`);
    expect(res.status).toBe(200);
    const resources = res.body.resources as Array<{ urn: string }>;
    for (const resource of resources) expect(resource).toEqual((await s.get(resource.urn)).body);
    return { urns: resources.map((r) => r.urn), next: res.body.next_page_token as string | null };
  }

  it('a page of small rows: one statement, the rows whole', async () => {
    hotStatementCheck.reused.clear();
    for (let round = 0; round < 2; round += 1) {
      const first = await page('project=small');
      expect(first.urns).toEqual(small.map((name) => urnOf(name, 'fake', 'small')));
      expect(first.next).toBeNull();
    }
    const reused = [...hotStatementCheck.reused];
    expect(reused).toContain('list resource items inline(project)');
    expect(reused.filter((shape) => shape.startsWith('list resource items('))).toEqual([]);
  });

  it('a page holding a row over its inline share: the rows that fit read again, whole', async () => {
    hotStatementCheck.reused.clear();
    for (let round = 0; round < 2; round += 1) {
      const all = await page('project=mixed');
      expect(all.urns).toEqual(
        ['mixed-a', 'mixed-b', 'mixed-c'].map((name) => urnOf(name, 'fake', 'mixed')),
      );
    }
    expect([...hotStatementCheck.reused]).toEqual(
      expect.arrayContaining([
        'list resource items inline(project)',
        'list resource items(project)',
      ]),
    );
    // From the large row on, and after it: the page token goes on from the page's last URN.
    const from = await page(`project=mixed&page_token=${(await pageAfter('mixed-a'))!}`);
    expect(from.urns).toEqual(['mixed-b', 'mixed-c'].map((name) => urnOf(name, 'fake', 'mixed')));
  });

  /** The token of a page of one ending at `name`, in project mixed. */
  async function pageAfter(name: string): Promise<string | null> {
    const res = await call('GET', `${s.api}/resources?page_size=1&project=mixed`);
    expect(res.body.resources[0].urn).toBe(urnOf(name, 'fake', 'mixed'));
    return res.body.next_page_token as string | null;
  }
});
