// Unit tests of the sample's per-tenant digest schedules: the controller upserts them through
// SchedulerService, the kit fires them by their cron in the tenant's zone, TenantDigestService runs them.
import { BadRequestException, NotFoundException } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { ChronosTesting, ChronosTestingModule } from '@chronos/nest/testing';
import { SchedulerService } from '@chronos/nest';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { useBodyLimits } from '../http/body-limits.js';
import { TenantsController } from '../http/tenants.controller.js';
import { digestDefinition, TenantDigestService } from '../tenants/tenant-digest.service.js';

let module: TestingModule;
let chronos: ChronosTesting;
let tenants: TenantsController;

const compile = () =>
  Test.createTestingModule({
    imports: [ChronosTestingModule.forRoot({ now: '2026-03-02T00:00:00Z' })],
    controllers: [TenantsController],
    providers: [TenantDigestService],
  }).compile();

beforeEach(async () => {
  module = await compile();
  module.useLogger(false);
  await module.init();
  chronos = module.get(ChronosTesting);
  tenants = module.get(TenantsController);
});
afterEach(() => module.close());

test('PUT /tenants/:id/digest adds a schedule fired at the cron in the tenant zone; the same settings again change nothing', async () => {
  expect(await tenants.setDigest('acme', { cron: '0 8 * * MON-FRI', timeZone: 'Europe/Paris' })).toEqual({
    schedule: 'tenant.acme.digest',
    added: 1,
    changed: 0,
    unchanged: 0,
  });
  expect(await tenants.setDigest('acme', { cron: '0 8 * * MON-FRI', timeZone: 'Europe/Paris' })).toMatchObject({ unchanged: 1 });
  // Monday 2 March 2026: 08:00 in Paris is 07:00 UTC
  const fired = await chronos.advanceTo('2026-03-02T12:00:00Z');
  expect(fired.map((t) => [t.type, t.triggerAt, t.payload])).toEqual([
    ['tenant.digest', Date.parse('2026-03-02T07:00:00Z'), { tenant: 'acme' }],
  ]);
  expect(await chronos.perform(fired[0])).toMatchObject({ outcome: 'succeeded' });

  expect(await tenants.setDigest('acme', { cron: '0 9 * * MON-FRI', timeZone: 'Europe/Paris' })).toMatchObject({ changed: 1 });
  expect((await chronos.advanceTo('2026-03-03T12:00:00Z')).map((t) => t.triggerAt)).toEqual([Date.parse('2026-03-03T08:00:00Z')]);
  expect(await tenants.removeDigest('acme')).toEqual({ schedule: 'tenant.acme.digest', removed: 1 });
  expect(await chronos.advanceTo('2026-03-04T12:00:00Z')).toEqual([]);
});

test('one tenant: a bad zone is a 400 naming the value, without the bulk call wording; removing a tenant without a digest is a 404, an id no name can hold a 400', async () => {
  const err = await tenants.setDigest('acme', { cron: '0 8 * * *', timeZone: 'Mars/Olympus' }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(BadRequestException);
  expect((err as Error).message).toMatch(/^Invalid schedule "tenant\.acme\.digest": "Mars\/Olympus": /);
  expect((err as Error).message).not.toMatch(/definition \[0\]|upsertSchedules/);
  await expect(tenants.setDigest('acme', { cron: 42 })).rejects.toThrow(/^expected \{"cron": string/);
  const ghost = await tenants.removeDigest('ghost').catch((e: unknown) => e);
  expect(ghost).toBeInstanceOf(NotFoundException);
  expect((ghost as Error).message).toBe('tenant "ghost" has no digest schedule (tenant.ghost.digest)');
  // an id no schedule name can hold (a space): a 400 naming it, not a 500
  const bad = await tenants.removeDigest(' ').catch((e: unknown) => e);
  expect(bad).toBeInstanceOf(BadRequestException);
  expect((bad as Error).message).toMatch(/^Invalid schedule "tenant\. \.digest": name: /);
});

test('a misspelt or unknown field is a 400 naming it, not dropped: {"timezone": "Europe/Berlin"} was stored as a digest at 09:00 UTC', async () => {
  const scheduler = module.get(SchedulerService);
  await expect(tenants.setDigest('acme', { cron: '0 9 * * *', timezone: 'Europe/Berlin' } as never)).rejects.toThrow(
    'unknown field "timezone" (expected {"cron": string, "timeZone"?: string})',
  );
  await expect(tenants.setDigests([{ id: 'a', cron: '0 9 * * *', tz: 'Asia/Kolkata' }])).rejects.toThrow(
    'entry [0]: unknown field "tz" (expected {"id": string, "cron": string, "timeZone"?: string})',
  );
  // the one-tenant route's tenant is the path's: an "id" in its body is unknown (it overrode the path's and wrote tenant.evil.digest)
  await expect(tenants.setDigest('acme', { id: 'evil', cron: '0 9 * * *' } as never)).rejects.toThrow('unknown field "id"');
  expect(await scheduler.removeSchedules(['tenant.evil.digest'])).toMatchObject({ removed: 0 });
  // a body that is not an object is shown as it came (an array was shown spread: {"0":1})
  await expect(tenants.setDigest('acme', [1] as never)).rejects.toThrow('expected {"cron": string, "timeZone"?: string}, got [1]');
  expect(await scheduler.removeSchedules(['tenant.acme.digest', 'tenant.a.digest'])).toMatchObject({ removed: 0 });
});

test('PUT /tenants/digests sets many tenants at once; one bad entry is a 400 naming it, and nothing is written', async () => {
  const scheduler = module.get(SchedulerService);
  const body = [
    { id: 'a', cron: '0 6 * * *', timeZone: 'UTC' },
    { id: 'b', cron: '0 7 * * *', timeZone: 'Asia/Kolkata' },
    { id: 'c', cron: '0 7 * * *', timeZone: 'Mars/Olympus' },
  ];
  const err = await tenants.setDigests(body).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(BadRequestException);
  expect((err as Error).message).toMatch(/tenant\.c\.digest.*\[2\].*Mars\/Olympus/);
  expect(await scheduler.removeSchedules(['tenant.a.digest'])).toEqual({ removed: 0, missing: ['tenant.a.digest'] });
  expect(await tenants.setDigests(body.slice(0, 2))).toEqual({ added: 2, changed: 0, unchanged: 0 });
  await expect(tenants.setDigests([body[0], body[0]])).rejects.toThrow(/given twice in one call to upsertSchedules: at \[0\] and \[1\]/);
  // an entry without its id names what is missing and shows the entry (was: 'expected {"cron": string, …}' for an entry with a cron: trial 16)
  await expect(tenants.setDigests([body[0], { cron: '0 8 * * *' }])).rejects.toThrow(
    'entry [1]: expected {"id": string, "cron": string, "timeZone"?: string}, got {"cron":"0 8 * * *"}',
  );
  // an empty id was stored as "tenant..digest", which DELETE /tenants/:id/digest cannot reach (trial3)
  await expect(tenants.setDigests([body[0], { id: '', cron: '0 8 * * *' }])).rejects.toThrow(
    'entry [1]: "id" is empty: expected a tenant id',
  );
  await expect(tenants.setDigest('acme', { cron: 42 })).rejects.toThrow('expected {"cron": string, "timeZone"?: string}, got {"cron":42}');
  await expect(tenants.setDigest('d', { cron: 42 })).rejects.toThrow(BadRequestException);
  expect((await chronos.advanceTo('2026-03-02T23:59:00Z')).map((t) => t.schedule)).toEqual(['tenant.b.digest', 'tenant.a.digest']);
});

test("PUT /tenants/digests over HTTP takes 1,500 tenants (a body over express's default 100 KB); other routes keep that limit", async () => {
  const app = (await compile()).createNestApplication<NestExpressApplication>({ logger: false });
  useBodyLimits(app); // as bootstrap.ts does
  await app.listen(0, '127.0.0.1');
  try {
    const url = await app.getUrl();
    const put = (path: string, body: unknown) =>
      fetch(url + path, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const tenants = Array.from({ length: 1500 }, (_, i) => ({
      id: `tenant-${String(i).padStart(5, '0')}`,
      cron: '0 8 * * MON-FRI',
      timeZone: 'America/Argentina/Buenos_Aires',
    }));
    expect(JSON.stringify(tenants).length).toBeGreaterThan(100 * 1024); // was a 413 Payload Too Large
    const res = await put('/tenants/digests', tenants);
    expect([res.status, await res.json()]).toEqual([200, { added: 1500, changed: 0, unchanged: 0 }]);
    // the one-tenant route still refuses a body over 100 KB
    const big = await put('/tenants/acme/digest', { cron: '0 8 * * *', note: 'x'.repeat(110 * 1024) });
    expect(big.status).toBe(413);
  } finally {
    await app.close();
  }
});

test("a tenant's digest schedule is labelled with the tenant, so `schedule ls --label tenant=<id>` finds it", () => {
  expect(digestDefinition('acme', '0 8 * * *', 'Europe/Paris')).toMatchObject({
    name: 'tenant.acme.digest',
    labels: { tenant: 'acme', kind: 'digest' },
  });
});
