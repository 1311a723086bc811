// The health indicator on Terminus's HealthIndicatorService: the worker's blocking connection, the
// leader's lease age, with and without TerminusModule imported.
import { HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { jest } from '@jest/globals';
import { ChronosHealthIndicator, InspectorService, SchedulerService } from '../../lib/index.js';
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
  // never eligible: with shards, an eligible second replica leads its fair share (8 of 16) moments after its start
  const follower = await createChronosTestApp({
    options: { namespace: leader.namespace, instanceId: 'health-b', scheduler: { eligible: false } },
  });
  apps.push(follower);
  const r = await follower.get(ChronosHealthIndicator).isHealthy('q');
  expect(r.q).toMatchObject({ status: 'up', scheduler: { leader: false, lease: { holder: 'health-a' } }, worker: { blocking: 'up' } });
  // the lease is the leader's, term included (not this follower's own term, 0 as it never led)
  expect(r.q.scheduler.term).toBe(0);
  expect(r.q.scheduler.lease?.term).toBe(leader.get(SchedulerService).term);
});

test('a replica that takes shards while its health check reads the leases stays up: only shards led through the read are compared', async () => {
  const first = await createChronosTestApp({ options: { instanceId: 'health-c' } });
  apps.push(first);
  const second = await createChronosTestApp({ options: { namespace: first.namespace, instanceId: 'health-d' } });
  apps.push(second);
  await waitFor(
    () => first.get(SchedulerService).shards.length === 8 && second.get(SchedulerService).shards.length === 8,
    'the fair shares',
  );
  // the first's lease read answers while it leads 8; before the check goes on, the second stops and the first takes its 8
  const inspector = first.get(InspectorService);
  const read = inspector.leader.bind(inspector);
  const spy = jest.spyOn(inspector, 'leader').mockImplementation(async () => {
    const answer = await read();
    await second.module.close(); // its shutdown hooks (it resigns), not the namespace's deletion: the first still uses it
    await waitFor(() => first.get(SchedulerService).shards.length === 16, 'the first replica to take the second one’s shards');
    return answer;
  });
  const r = await first.get(ChronosHealthIndicator).isHealthy('q');
  spy.mockRestore();
  expect(r.q.scheduler).toMatchObject({ leader: true, lease: { holder: 'health-c' } });
  expect(r.q.scheduler.failing).toBeUndefined();
  expect(r.q.status).toBe('up');
});
