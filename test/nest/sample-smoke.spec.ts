// The sample compiles and boots (CI smoke test): start `node dist/sample/main.js` as
// `npm run sample` does, see the leader log line, answer HTTP, stop cleanly on SIGTERM.
import { matching, parsePrometheus, sumOf } from '../helpers/prometheus.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { freePort, SampleMain } from '../helpers/sample.js';
import { Inspector } from '../../lib/core/index.js';
import { waitFor, within } from '../helpers/wait.js';

test('the sample boots, leads, answers /status, /health and /metrics, and stops cleanly on SIGTERM', async () => {
  const namespace = newNamespace('smoke');
  const port = await freePort();
  const sample = new SampleMain({ REDIS_URL: redisUrl(), PORT: String(port), CHRONOS_NAMESPACE: namespace, CHRONOS_INSTANCE: 'smoke-1' });
  try {
    await within(sample.line(/Listening on http:\/\/127\.0\.0\.1:\d+/), 20_000, 'the sample to listen');
    await within(sample.line(/Leadership acquired \(term=\d+/), 10_000, 'the leader log line');
    const status = (await (await fetch(`http://127.0.0.1:${port}/status`)).json()) as {
      leader: { instance: string };
      schedules: { name: string }[];
    };
    expect(status.leader.instance).toBe('smoke-1');
    expect(status.schedules.map((s) => s.name).sort()).toEqual([
      'ReportsService.healthCheck',
      'ReportsService.nightlyReport',
      'inventory.sync',
    ]);
    // the web console is mounted at /chronos: its page and the aggregated poll answer
    const page = await fetch(`http://127.0.0.1:${port}/chronos/`);
    expect([page.status, page.headers.get('content-security-policy')]).toEqual([200, expect.stringContaining("script-src 'self'")]);
    const polled = (await (await fetch(`http://127.0.0.1:${port}/chronos/api/overview`)).json()) as { leader: { instance: string } };
    expect(polled.leader.instance).toBe('smoke-1');
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    expect(health.status).toBe(200);
    // @willsoto/nestjs-prometheus serves prom-client's default registry, where `metrics: true` put Chronos's
    const metrics = parsePrometheus(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
    expect(sumOf(metrics, 'chronos_leader', { instance: 'smoke-1' })).toBe(1);
    expect(sumOf(metrics, 'chronos_schedules_orphaned')).toBe(0);
    expect(matching(metrics, 'process_cpu_user_seconds_total')).toHaveLength(1);
    const sent = (await (
      await fetch(`http://127.0.0.1:${port}/emails`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"to":"ops@example.com","subject":"smoke"}',
      })
    ).json()) as { id: string };
    await within(
      sample.line(new RegExp(`Email sent: "smoke" to ops@example.com \\(task=${sent.id} instance=smoke-1\\)`)),
      10_000,
      'the email task',
    );
    sample.kill('SIGTERM');
    const exit = await within(sample.exited, 15_000, 'the sample to exit');
    // Nest's shutdown hooks re-raise the signal once the app is closed
    expect(exit.signal === 'SIGTERM' || exit.code === 0).toBe(true);
    expect(sample.output).toMatch(/Leadership resigned \(term=\d+ shards=[\d,]+\)/);
    expect(sample.output).toMatch(/Worker stopped \(server=smoke-1/);
    expect(sample.output).not.toMatch(/ERROR|unhandled/i);
  } finally {
    sample.kill('SIGKILL');
    await deleteNamespace(namespace);
  }
});

test('CHRONOS_SAMPLE_DEMO=1: the demo feed gives the console active, scheduled, retry or dead tasks to show', async () => {
  const namespace = newNamespace('smoke-demo');
  const port = await freePort();
  const env = { REDIS_URL: redisUrl(), PORT: String(port), CHRONOS_NAMESPACE: namespace, CHRONOS_INSTANCE: 'demo-1' };
  const sample = new SampleMain({ ...env, CHRONOS_SAMPLE_DEMO: '1', CHRONOS_SAMPLE_FAST: '1' });
  const inspector = new Inspector({ connection: redisUrl(), namespace });
  try {
    await within(sample.line(/Listening on http:\/\/127\.0\.0\.1:\d+/), 20_000, 'the sample to listen');
    const demo = await waitFor(
      async () => {
        const q = await inspector.queue('default');
        return q.active > 0 && q.scheduled > 0 && q.retry + q.dead > 0 ? q : undefined;
      },
      { what: 'the default queue to hold active, scheduled and failed demo tasks', timeoutMs: 40_000 },
    );
    expect(demo).toMatchObject({ active: expect.any(Number), scheduled: expect.any(Number) });
    const schedules = (await inspector.schedules()).map((s) => s.name);
    expect(schedules).toContain('demo.feed');
    sample.kill('SIGTERM');
    await within(sample.exited, 15_000, 'the sample to exit');
  } finally {
    sample.kill('SIGKILL');
    await inspector.close();
    await deleteNamespace(namespace);
  }
});
