// The health indicator on Terminus's HealthIndicatorService: the worker's blocking connection, the
// leader's lease age, with and without TerminusModule imported.
import { HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { ChronosHealthIndicator, SchedulerService } from '../../lib/index.js';
import { createChronosTestApp, type ChronosTestApp } from '../helpers/nest-app.js';
import { waitFor } from '../helpers/wait.js';

const apps: ChronosTestApp[] = [];
afterEach(async () => {
  for (const a of apps.splice(0).reverse()) await a.close(); // the last closed deletes what the others left
});

test('leader: up, with its blocking connection up and its lease (holder, term, age below the TTL) as Redis has it', async () => {
  const app = await createChronosTestApp({ imports: [TerminusModule], options: { instanceId: 'health-1', leaderTtl: 2000 } });
  apps.push(app);
  await waitFor(() => app.get(SchedulerService).isLeader, 'leadership');
  const result = await app.get(HealthCheckService).check([() => app.get(ChronosHealthIndicator).isHealthy('chronos')]);
  expect(result.status).toBe('ok');
  const d = result.details.chronos as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- reads nested details
  expect(d).toMatchObject({ status: 'up', redis: 'up', worker: { enabled: true, running: true, blocking: 'up' } });
  expect(d.scheduler).toMatchObject({ leader: true, lease: { holder: 'health-1', term: app.get(SchedulerService).term } });
  expect(d.scheduler.lease.ageMs).toBeGreaterThanOrEqual(0);
  expect(d.scheduler.lease.ageMs + d.scheduler.lease.ttlMs).toBeLessThanOrEqual(2000);
  // the time since this replica's last fetch: a blocking read answers at least once per blockTimeout (1 s)
  const later = await waitFor(async () => {
    const r = await app.get(HealthCheckService).check([() => app.get(ChronosHealthIndicator).isHealthy('chronos')]);
    return (r.details.chronos as { worker: { lastFetchAgoMs?: number } }).worker.lastFetchAgoMs !== undefined ? r : undefined;
  }, 'a first fetch read to answer');
  expect((later.details.chronos as { worker: { lastFetchAgoMs: number } }).worker.lastFetchAgoMs).toBeGreaterThanOrEqual(0);
});

test("a follower without TerminusModule imported: same result shape, up, showing the leader's lease", async () => {
  const leader = await createChronosTestApp({ options: { instanceId: 'health-a' } });
  apps.push(leader);
  await waitFor(() => leader.get(SchedulerService).isLeader, 'leadership');
  const follower = await createChronosTestApp({ options: { namespace: leader.namespace, instanceId: 'health-b' } });
  apps.push(follower);
  const r = await follower.get(ChronosHealthIndicator).isHealthy('q');
  expect(r.q).toMatchObject({ status: 'up', scheduler: { leader: false, lease: { holder: 'health-a' } }, worker: { blocking: 'up' } });
});
