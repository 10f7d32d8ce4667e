import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { AuditEntry, Webhook, WebhookDelivery } from '../../src/cli/api-documents.js';
import { type CliResult, ensureBuilt, runCli } from '../helpers/cli-run.js';
import { describeOneDialect } from '../helpers/dialects.js';
import { createFakeModule } from '../helpers/fake-module.js';
import type { Harness } from '../helpers/harness.js';
import { jsonOf as json, startHeldClockCli } from '../helpers/held-clock-cli.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';

/**
 * `steward webhook …` and `steward audit list` (the built CLI) against a real Steward whose clock
 * the test holds, and a real receiver on 127.0.0.1 that checks every signature. The worker is off
 * and the delivery loop is stepped by hand (`runOnce`), so nothing here waits for a retry to come.
 */

const fake = createFakeModule({ kind: 'fake' });
const SECRET = 'whsec-cli-3f9a61d0c7b24e58';
const START = Date.parse('2026-03-28T12:00:00.000Z');
const MINUTE = 60_000;
const URN = 'orn:steward:fake:p1:hooked';

/**
 * A case runs a CLI command per step, one after another: about 0.3 s each on a quiet machine,
 * several times that on a loaded one: the first case took under 10 s alone, and failed jest's 30 s
 * default in a full `npm test`'s SQLite pass (56 s for the file).
 */
const CLI_STEPS_MS = 180_000;

type Page<K extends string, T> = Record<K, T[]> & { next_page_token: string | null };

describeOneDialect('sqlite', 'steward webhook and steward audit', () => {
  let h: Harness;
  let clock: { nowMs: number };
  let receiver: Receiver;
  let steward: (...args: string[]) => Promise<CliResult>;
  /** Every stdout the CLI printed, to check that no secret is ever among it. */
  const printed: string[] = [];
  const run = async (args: string[], input?: string): Promise<CliResult> => {
    const result = await runCli(args, { STEWARD_URL: h.url }, input);
    printed.push(result.stdout);
    return result;
  };
  const rows = (stdout: string) =>
    stdout
      .trim()
      .split('\n')
      .map((line) => line.split(/\s{2,}/));

  beforeAll(() => ensureBuilt());
  beforeEach(async () => {
    receiver = await startReceiver(SECRET, Infinity);
    receiver.answerWith((path) => ({ status: path === '/flaky' ? 500 : 200 }));
    ({ h, clock } = await startHeldClockCli(
      START,
      { webhookAllow: ['127.0.0.1/32'], webhookGiveUpMs: MINUTE },
      [fake.definition],
    ));
    steward = (...args) => run(args);
  });
  afterEach(async () => {
    await h.close();
    await receiver.close();
  });

  it(
    'creates, lists, gets, shows deliveries, redelivers and deletes webhooks; never prints the secret',
    async () => {
      // The secret from a file (its final line break dropped) or from stdin, never an option's value.
      const secretFile = join(h.dir, 'secret');
      writeFileSync(secretFile, `${SECRET}\n`);
      const made = await steward(
        'webhook',
        'create',
        `${receiver.url}/hook`,
        '--event',
        'resource.created',
        '--project',
        'p1',
        '--secret-file',
        secretFile,
      );
      expect(made).toMatchObject({ code: 0, stderr: '' });
      const hookId = /^id:\s+(wh_\S+)$/m.exec(made.stdout)![1]!;
      expect(made.stdout).toMatch(new RegExp(`^url:\\s+${receiver.url}/hook$`, 'm'));
      expect(made.stdout).toMatch(/^events:\s+resource\.created$/m);
      expect(made.stdout).toMatch(/^project:\s+p1$/m);
      expect(made.stdout).toMatch(/^state:\s+enabled$/m);
      expect(made.stdout).toMatch(/^created:\s+\S+ by anonymous$/m);

      const flaky = json<Webhook>(
        await run(
          [
            'webhook',
            'create',
            `${receiver.url}/flaky`,
            '--event',
            '*',
            '--secret-file',
            '-',
            '-o',
            'json',
          ],
          SECRET,
        ),
      );
      expect(flaky).toEqual({
        id: expect.stringMatching(/^wh_/),
        url: `${receiver.url}/flaky`,
        events: ['*'],
        project: null,
        enabled: true,
        disabled_at: null,
        disabled_reason: null,
        created_by: 'anonymous',
        created_at: new Date(START).toISOString(),
      });

      // Oldest first, paged as the other lists.
      const table = await steward('webhook', 'list');
      expect(table.code).toBe(0);
      expect(rows(table.stdout)).toEqual([
        ['ID', 'URL', 'EVENTS', 'PROJECT', 'STATE', 'CREATED'],
        [hookId, `${receiver.url}/hook`, 'resource.created', 'p1', 'enabled', expect.any(String)],
        [flaky.id, `${receiver.url}/flaky`, '*', '*', 'enabled', expect.any(String)],
      ]);
      const first = json<Page<'webhooks', Webhook>>(
        await steward('webhook', 'list', '--limit', '1', '-o', 'json'),
      );
      expect(first.webhooks.map((w) => w.id)).toEqual([hookId]);
      expect(first.next_page_token).toEqual(expect.any(String));
      expect(json<Webhook>(await steward('webhook', 'get', hookId, '-o', 'json'))).toMatchObject({
        id: hookId,
        events: ['resource.created'],
        project: 'p1',
      });

      // An event: one signed delivery to each webhook; /flaky answers 500.
      const resourceFile = join(h.dir, 'hooked.json');
      writeFileSync(
        resourceFile,
        JSON.stringify({ kind: 'fake', project: 'p1', name: 'hooked', configs: {} }),
      );
      expect((await steward('resource', 'create', '-f', resourceFile)).code).toBe(0);
      const loop = h.steward.webhookDelivery;
      expect(await loop.runOnce()).toBeGreaterThanOrEqual(2);
      expect(receiver.received.filter((r) => r.path === '/hook')).toEqual([
        expect.objectContaining({
          event: expect.objectContaining({ type: 'resource.created', urn: URN }),
          signed: true,
        }),
      ]);
      expect(receiver.received.every((r) => r.signed)).toBe(true);

      const delivered = await steward('webhook', 'deliveries', hookId);
      expect(rows(delivered.stdout)).toEqual([
        ['ID', 'EVENT', 'TYPE', 'URN', 'STATE', 'ATTEMPTS', 'LAST ANSWER', 'NEXT ATTEMPT'],
        [
          expect.stringMatching(/^dlv_/),
          expect.stringMatching(/^\d+$/),
          'resource.created',
          URN,
          'delivered',
          '1',
          '200',
          '-',
        ],
      ]);
      const failing = json<Page<'deliveries', WebhookDelivery>>(
        await steward('webhook', 'deliveries', flaky.id, '-o', 'json'),
      );
      expect(failing.next_page_token).toBeNull();
      const failed = failing.deliveries.find((d) => d.attempts.length > 0)!;
      expect(failed).toMatchObject({ state: 'pending', urn: URN });
      expect(failed.attempts).toEqual([expect.objectContaining({ attempt: 1, status_code: 500 })]);

      // At the give-up time the last try fails too: the webhook is disabled, and says why.
      clock.nowMs += MINUTE;
      await loop.runOnce();
      const disabled = await steward('webhook', 'get', flaky.id);
      expect(disabled.stdout).toMatch(
        /^state:\s+disabled at 2026-03-28T12:01:00\.000Z: delivery dlv_\S+ failed for 60000 ms \(last: status 500\)$/m,
      );
      expect(rows((await steward('webhook', 'list')).stdout)[2]![4]).toBe('disabled');

      // A redelivery is a new delivery of the same event, due now, and turns the webhook back on.
      receiver.answerWith(() => ({ status: 204 }));
      const again = await steward('webhook', 'redeliver', flaky.id, failed.id);
      expect(again).toMatchObject({ code: 0, stderr: '' });
      const againId = /^id:\s+(dlv_\S+)$/m.exec(again.stdout)![1]!;
      expect(again.stdout).toMatch(new RegExp(`^webhook:\\s+${flaky.id}$`, 'm'));
      expect(again.stdout).toMatch(
        new RegExp(`^event:\\s+${failed.event_id} ${failed.event_type}$`, 'm'),
      );
      expect(again.stdout).toMatch(/^state:\s+pending$/m);
      expect(again.stdout).toMatch(/^attempts:\s+0$/m);
      expect(json<Webhook>(await steward('webhook', 'get', flaky.id, '-o', 'json')).enabled).toBe(
        true,
      );
      await loop.runOnce();
      const after = json<Page<'deliveries', WebhookDelivery>>(
        await steward('webhook', 'deliveries', flaky.id, '-o', 'json'),
      );
      expect(after.deliveries.find((d) => d.id === againId)).toMatchObject({
        state: 'delivered',
        attempts: [expect.objectContaining({ status_code: 204 })],
      });
      const redeliveredJson = json<WebhookDelivery>(
        await steward('webhook', 'redeliver', flaky.id, failed.id, '-o', 'json'),
      );
      expect(redeliveredJson).toMatchObject({
        event_id: failed.event_id,
        state: 'pending',
        attempts: [],
      });

      expect(await steward('webhook', 'delete', flaky.id)).toEqual({
        code: 0,
        stdout: `webhook ${flaky.id} deleted\n`,
        stderr: '',
      });
      expect(json(await steward('webhook', 'delete', hookId, '-o', 'json'))).toEqual({
        deleted: hookId,
      });
      expect(
        json<Page<'webhooks', Webhook>>(await steward('webhook', 'list', '-o', 'json')),
      ).toEqual({ webhooks: [], next_page_token: null });
      expect((await steward('webhook', 'list')).stdout).toBe('no webhooks\n');

      // The audit table names webhook writes, under the webhook's project (none for every project's).
      const audited = json<Page<'entries', AuditEntry>>(
        await steward('audit', 'list', '-o', 'json'),
      ).entries.filter((entry) => entry.path.includes('/webhooks'));
      expect(
        audited
          .filter((entry) => entry.method !== 'GET')
          .map(({ action, project, status }) => ({ action, project, status })),
      ).toEqual(
        expect.arrayContaining([
          { action: 'webhook.create', project: 'p1', status: 201 },
          { action: 'webhook.delete', project: 'p1', status: 204 },
          { action: 'webhook.redeliver', project: flaky.project ?? null, status: 201 },
        ]),
      );
      expect(audited.filter((entry) => entry.action === 'unknown')).toEqual([]);

      // The API never returns the secret, so nothing printed holds it.
      expect(printed.filter((out) => out.includes(SECRET))).toEqual([]);
    },
    CLI_STEPS_MS,
  );

  it(
    "fails with the server's message (exit 1), or as a usage error (exit 2) with nothing sent",
    async () => {
      const refusals: Array<[string[], string]> = [
        [['webhook', 'get', 'wh_nope'], 'steward: webhook wh_nope does not exist\n'],
        [['webhook', 'delete', 'wh_nope'], 'steward: webhook wh_nope does not exist\n'],
        [['webhook', 'deliveries', 'wh_nope'], 'steward: webhook wh_nope does not exist\n'],
        [
          ['webhook', 'redeliver', 'wh_nope', 'dlv_nope'],
          'steward: webhook wh_nope does not exist\n',
        ],
      ];
      const answers = await Promise.all(refusals.map(([args]) => steward(...args)));
      expect(answers).toEqual(refusals.map(([, stderr]) => ({ code: 1, stdout: '', stderr })));

      // What the server refuses in a create is its to say, naming the field.
      const secretFile = join(h.dir, 'secret');
      writeFileSync(secretFile, SECRET);
      const created = await Promise.all(
        [
          ['webhook', 'create', `${receiver.url}/hook`, '--secret-file', secretFile],
          ['webhook', 'create', `${receiver.url}/hook`, '--event', '*'],
          [
            'webhook',
            'create',
            `${receiver.url}/hook`,
            '--event',
            'no.such',
            '--secret-file',
            secretFile,
          ],
          [
            'webhook',
            'create',
            'http://10.0.0.1/hook',
            '--event',
            '*',
            '--secret-file',
            secretFile,
          ],
        ].map((args) => steward(...args)),
      );
      expect(created.map((r) => r.code)).toEqual([1, 1, 1, 1]);
      expect(created.map((r) => r.stderr)).toEqual([
        expect.stringMatching(/events/),
        expect.stringMatching(/secret/),
        expect.stringMatching(/no\.such/),
        expect.stringMatching(/10\.0\.0\.1/),
      ]);

      const usage = await Promise.all(
        [
          ['webhook', 'list', '--limit', '0'],
          [
            'webhook',
            'create',
            `${receiver.url}/hook`,
            '--event',
            '*',
            '--secret-file',
            join(h.dir, 'missing'),
          ],
          ['webhook', 'redeliver', 'wh_only'],
          ['audit', 'list', '--limit', 'x'],
        ].map(async (args) => (await steward(...args)).code),
      );
      expect(usage).toEqual([2, 2, 2, 2]);
      expect(
        json<Page<'webhooks', Webhook>>(await steward('webhook', 'list', '-o', 'json')),
      ).toEqual({ webhooks: [], next_page_token: null });
    },
    CLI_STEPS_MS,
  );

  it(
    'audit list: newest first, filtered by action and actor, as a table and as JSON',
    async () => {
      const resourceFile = join(h.dir, 'hooked.json');
      writeFileSync(
        resourceFile,
        JSON.stringify({ kind: 'fake', project: 'p1', name: 'hooked', configs: {} }),
      );
      expect((await steward('resource', 'create', '-f', resourceFile)).code).toBe(0);
      expect((await steward('resource', 'delete', 'orn:steward:fake:p1:missing')).code).toBe(1);
      expect((await steward('schedule', 'delete', 'sch_nope')).code).toBe(1);

      const deletes = json<Page<'entries', AuditEntry>>(
        await steward('audit', 'list', '--action', 'DELETE', '-o', 'json'),
      );
      expect(deletes.next_page_token).toBeNull();
      expect(deletes.entries).toEqual([
        expect.objectContaining({
          action: 'schedule.delete',
          actor: 'anonymous',
          method: 'DELETE',
          path: '/api/v1beta1/schedules/sch_nope',
          status: 404,
          outcome: 'refused',
          code: 'not_found',
        }),
        expect.objectContaining({
          action: 'resource.delete',
          urn: 'orn:steward:fake:p1:missing',
          project: 'p1',
          status: 404,
        }),
      ]);
      expect(deletes.entries[0]!.id).toBeGreaterThan(deletes.entries[1]!.id);

      const creates = await steward(
        'audit',
        'list',
        '--action',
        'resource.create',
        '--actor',
        'anonymous',
      );
      expect(creates).toMatchObject({ code: 0, stderr: '' });
      expect(rows(creates.stdout)).toEqual([
        ['ID', 'AT', 'ACTOR', 'PROJECT', 'METHOD', 'ACTION', 'STATUS', 'TARGET'],
        [
          expect.stringMatching(/^\d+$/),
          new Date(START).toISOString(),
          'anonymous',
          'p1',
          'POST',
          'resource.create',
          '202',
          URN,
        ],
      ]);
      const limited = json<Page<'entries', AuditEntry>>(
        await steward('audit', 'list', '--limit', '1', '-o', 'json'),
      );
      expect(limited.entries).toHaveLength(1);
      expect(limited.next_page_token).toEqual(expect.any(String));
      expect((await steward('audit', 'list', '--actor', 'nobody')).stdout).toBe(
        'no audit entries\n',
      );

      // A bad filter is the server's 400, with its message.
      expect(await steward('audit', 'list', '--since', 'yesterday')).toEqual({
        code: 1,
        stdout: '',
        stderr: 'steward: since is not an RFC 3339 time such as 2026-01-31T12:00:00Z\n',
      });
    },
    CLI_STEPS_MS,
  );
});
