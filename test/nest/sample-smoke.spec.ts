// The sample compiles and boots (CI smoke test): start `node dist/sample/main.js` as
// `npm run sample` does, see the leader log line, answer HTTP, stop cleanly on SIGTERM.
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';
import { freePort, SampleMain } from '../helpers/sample.js';
import { within } from '../helpers/wait.js';

test('the sample boots, leads, answers /status and /health, and stops cleanly on SIGTERM', async () => {
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
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    expect(health.status).toBe(200);
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
    expect(sample.output).toMatch(/Leadership resigned \(term=\d+\)/);
    expect(sample.output).toMatch(/Worker stopped \(server=smoke-1/);
    expect(sample.output).not.toMatch(/ERROR|unhandled/i);
  } finally {
    sample.kill('SIGKILL');
    await deleteNamespace(namespace);
  }
});
