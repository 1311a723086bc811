// `chronos dead ls` is what an operator types first to list dead tasks (trials 1 and 2): it said
// "unknown command 'ls'" and nothing of `task ls --state dead`; and `task ls --help` did not say
// that --queue and --state are required, which the command refuses to run without.
import { cliRunner } from '../helpers/cli.js';

const { chronos } = cliRunner(() => 'chronos-test-dead-ls-hint');

test('dead ls (and dead list) is a usage error naming the command that lists dead tasks, with the queue given', async () => {
  for (const args of [
    ['dead', 'ls'],
    ['dead', 'list', '--queue', 'mail'],
  ]) {
    const r = await chronos(...args);
    const q = args.includes('mail') ? 'mail' : '<queue>';
    expect([args.join(' '), r.code, r.out]).toEqual([args.join(' '), 2, '']);
    expect(r.err).toContain(`chronos task ls --queue ${q} --state dead`);
  }
  const j = await chronos('--json', 'dead', 'ls');
  expect(j.code).toBe(2);
  expect(JSON.parse(j.err)).toMatchObject({ error: { code: 'USAGE', message: expect.stringContaining('--state dead') } });
});

test('task ls --help says --queue and --state are required', async () => {
  const r = await chronos('task', 'ls', '--help');
  expect(r.code).toBe(0);
  expect(r.out).toMatch(/--queue <queue>\s+queue name \(required\)/);
  expect(r.out).toMatch(/--state <state>\s+task state \(required\)/);
});
