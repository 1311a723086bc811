// An act refused before it ran is in the audit trail, as one the act itself refused (trial2): the
// CLI's `task retry <id>` of an id found in no queue, `task delete --queue <typo>`, `queue pause
// <typo>`, `queue limits <typo>`, `task cancel --queue <typo>`, `task retry|delete|run --all
// --queue <typo>`, and the console's acts on a queue name no queue has (a 404), failed and left no
// entry, while `task retry <id> --queue default` of a missing id (refused by the Inspector's act)
// did: the trail said nothing of an operator's typo.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createConsoleHandler } from '../../lib/console/handler.js';
import { Inspector, QueueClient } from '../../lib/core/index.js';
import type { AuditEntry } from '../../lib/core/index.js';
import { cliRunner } from '../helpers/cli.js';
import { deleteNamespace, newNamespace, redisUrl } from '../helpers/redis.js';

let ns: string;
const { chronos } = cliRunner(() => ns);
let client: QueueClient;
let inspector: Inspector;

beforeAll(async () => {
  ns = newNamespace('refused-acts');
  client = new QueueClient({ connection: redisUrl(), namespace: ns });
  await client.enqueue('later', { n: 1 }, { delay: 3_600_000 }); // makes the queue `default` known
  inspector = new Inspector({ connection: redisUrl(), namespace: ns });
});
afterAll(async () => {
  await inspector?.close();
  await client?.close();
  await deleteNamespace(ns);
});

/** The failed entries of the trail, oldest first, as [action, queue, taskId, error]. */
async function failed(): Promise<(string | undefined)[][]> {
  const { entries } = await inspector.audit({ result: 'failed', limit: 500 });
  return entries.reverse().map((e: AuditEntry) => [e.action, e.queue, e.taskId, e.error]);
}

test('the CLI records an act refused at its door (a task or queue not found) as failed, with who and the error', async () => {
  const acts: [string[], string, string | undefined, string | undefined][] = [
    [['task', 'retry', 'nope'], 'dead.retry', undefined, 'nope'],
    [['task', 'delete', 'nope', '--queue', 'defualt'], 'task.delete', 'defualt', 'nope'],
    [['task', 'run', 'nope'], 'task.run', undefined, 'nope'],
    [['task', 'cancel', 'nope', '--queue', 'defualt'], 'task.cancel', 'defualt', undefined],
    [['queue', 'pause', 'defualt'], 'queue.pause', 'defualt', undefined],
    [['queue', 'resume', 'defualt'], 'queue.resume', 'defualt', undefined],
    [['queue', 'limits', 'defualt', '--concurrency', '2'], 'queue.limits', 'defualt', undefined],
    [['task', 'retry', '--all', '--queue', 'defualt', '--yes'], 'dead.retry', 'defualt', undefined],
    [['task', 'delete', '--all', '--queue', 'defualt', '--state', 'dead', '--yes'], 'task.delete', 'defualt', undefined],
    [['task', 'run', '--all', '--queue', 'defualt', '--yes'], 'task.run', 'defualt', undefined],
  ];
  const expected: (string | undefined)[][] = [];
  for (const [args, action, queue, taskId] of acts) {
    const r = await chronos('--actor', 'ops:ada', ...args);
    expect([args.join(' '), r.code]).toEqual([args.join(' '), 1]);
    expected.push([action, queue, taskId, r.err.replace(/^error: /, '').trim()]);
  }
  expect(await failed()).toEqual(expected);
  const { entries } = await inspector.audit({ result: 'failed', limit: 1 });
  expect(entries[0]).toMatchObject({ actor: 'ops:ada', origin: expect.stringMatching(/^cli /) });
}, 60_000);

describe('the console', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    const handler = createConsoleHandler({ inspector, actor: () => 'console:bob' });
    server = createServer((req, res) => handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server?.close(() => resolve()));
  });

  test('records an act on a queue no queue has (a 404) as failed, as the CLI and a missing task id', async () => {
    const { entries: before } = await inspector.audit({ result: 'failed', limit: 500 });
    const acts: [string, unknown, string][] = [
      ['queues/defualt/pause', {}, 'queue.pause'],
      ['queues/defualt/resume', {}, 'queue.resume'],
      ['queues/defualt/limits', { concurrency: 2 }, 'queue.limits'],
      ['queues/defualt/tasks/act', { action: 'retry', state: 'dead', ids: ['nope'] }, 'dead.retry'],
      ['queues/defualt/tasks/act', { action: 'delete', state: 'dead', all: true }, 'task.delete'],
    ];
    for (const [path, body] of acts) {
      const r = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect([path, r.status, ((await r.json()) as { code: string }).code]).toEqual([path, 404, 'QUEUE_NOT_FOUND']);
    }
    const { entries } = await inspector.audit({ result: 'failed', limit: 500 });
    const added = entries.slice(0, entries.length - before.length).reverse();
    expect(added.map((e) => [e.action, e.queue, e.actor, e.origin])).toEqual(
      acts.map(([, , action]) => [action, 'defualt', 'console:bob', 'console 127.0.0.1']),
    );
    expect(added.every((e) => /Queue "defualt" not found/.test(e.error ?? ''))).toBe(true);
  });
});
