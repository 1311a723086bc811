import type { Command } from 'commander';
import type { Inspector, LeaderInfo, QueueInfo, RedisInfo, ScheduleInfo, ServerInfo } from '../../core/admin/inspector.js';
import { historyText, parseWindow } from './history.js';
import { silenceOf } from '../../core/admin/schedule-activity.js';
import { shardLed, unservedQueues } from '../../core/admin/fleet.js';
import { SHARD_COUNT } from '../../core/redis/protocol.js';
import { engineTime } from '../../core/runtime/time.js';
import { positiveInt, UsageError, type Cli } from '../context.js';
import { bytes, displayZone, duration, fields, table, when } from '../format.js';
import { limitsCommands, limitsText, stateText } from './limits.js';

type Run = (fn: (cli: Cli, ...args: never[]) => Promise<void>) => (...args: unknown[]) => Promise<void>;

export function queueTable(queues: QueueInfo[]): string {
  if (queues.length === 0) {
    return 'No queues yet (nothing enqueued, served or scheduled in this namespace: is it the right one? see --namespace).';
  }
  return table(
    ['queue', 'state', 'pending', 'active', 'scheduled', 'retry', 'dead', 'lost 7d', 'latency', 'processed today', 'failed today'].concat(
      'memory',
    ),
    queues.map((q) => [
      q.name,
      stateText(q),
      q.pending,
      q.active,
      q.scheduled,
      q.retry,
      q.dead,
      q.lost,
      latencyText(q),
      q.processedToday,
      q.failedToday,
      bytes(q.memoryBytes),
    ]),
  );
}

/**
 * A queue's latency as shown: its stream's oldest pending task's age; `in groups` when every pending
 * task waits in a group (not looked at: README "Limits and groups"), `-` when none is pending.
 */
export function latencyText(q: Pick<QueueInfo, 'pending' | 'latencyMs' | 'groups'>): string {
  if (q.pending - (q.groups?.waiting ?? 0) > 0) return duration(q.latencyMs);
  return q.pending > 0 ? 'in groups' : '-';
}

function redisLine(r: RedisInfo): string {
  const limit = r.maxMemoryBytes > 0 ? `of ${bytes(r.maxMemoryBytes)}` : '(no maxmemory)';
  const memory = `memory ${bytes(r.usedMemoryBytes)} ${limit} · maxmemory-policy ${r.maxMemoryPolicy}`;
  const line = `Redis ${r.version} ${r.mode} ${r.role} · ${memory} · ${r.connectedClients} client${r.connectedClients === 1 ? '' : 's'}`;
  return r.warning ? `${line}\nWARNING: ${r.warning}` : line;
}

function leaderLine(l: LeaderInfo | null): string {
  if (!l) return 'Leader: none (no scheduler leads a shard of the schedules)';
  const head = `Leader: ${l.instance} · term ${l.term} · since ${when(l.since)} · lease ${duration(l.ttlMs)} left`;
  return `${head} · ${l.shards.length}/${SHARD_COUNT} shards led (${shardsBy(l)})`;
}

/** The shards each instance leads: `api-1: 0-5, api-2: 6-10`. */
function shardsBy(l: LeaderInfo): string {
  const by = new Map<string, number[]>();
  for (const s of l.shards) by.set(s.instance, [...(by.get(s.instance) ?? []), s.shard]);
  return [...by].map(([instance, shards]) => `${instance}: ${shards.join(',')}`).join('; ');
}

function scheduleLine(s: ScheduleInfo[], leader: LeaderInfo | null): string {
  if (s.length === 0) return 'Schedules: none';
  const now = engineTime.now();
  const silent = s.flatMap((x) => {
    const why = silenceOf(x, now, shardLed(leader, x.name)).silent;
    return why ? [`\nSILENT: schedule ${x.name}: ${why.message}`] : [];
  });
  const paused = s.filter((x) => x.paused).length;
  const orphaned = s.filter((x) => x.orphaned).length;
  const next = s.filter((x) => !x.paused && !x.orphaned && x.next.length > 0).sort((a, b) => a.next[0] - b.next[0])[0];
  const upcoming = next ? ` · next: ${next.name} at ${when(next.next[0])}` : '';
  return `Schedules: ${s.length} (${paused} paused, ${orphaned} orphaned)${upcoming}${silent.join('')}`;
}

/** Everything at a glance, as `chronos stats` prints it. */
export async function snapshot(inspector: Inspector) {
  const [redis, leader, servers, instances, queues, schedules] = await Promise.all([
    inspector.redisInfo(),
    inspector.leader(),
    inspector.servers(),
    inspector.instances(),
    inspector.queues(),
    inspector.schedules(1),
  ]);
  return { namespace: inspector.namespace, at: Date.now(), redis, leader, servers, instances, queues, schedules };
}

function statsText(s: Awaited<ReturnType<typeof snapshot>>): string {
  const alive = s.instances.filter((i) => i.alive).length;
  const active = s.servers.reduce((n, x) => n + x.active, 0);
  const slots = s.servers.reduce((n, x) => n + x.concurrency, 0);
  return [
    `Chronos · namespace ${s.namespace} · ${when(s.at)} · times in ${displayZone()}`,
    redisLine(s.redis),
    leaderLine(s.leader),
    `Workers: ${s.servers.length} server(s)${overdueText(s.servers)}, ${active}/${slots} slots busy · Scheduler instances: ${alive} alive`,
    scheduleLine(s.schedules, s.leader),
    queueTable(s.queues),
    ...unservedLines(s.queues, s.servers),
  ].join('\n');
}

/**
 * `NOT SERVED: queue reports: no live worker serves it (3 pending)` per queue no live worker serves
 * ({@link unservedQueues}), as the console's overview warns: its state column says `running` (not
 * paused), and its tasks wait for a worker that serves it.
 */
function unservedLines(queues: QueueInfo[], servers: ServerInfo[]): string[] {
  const byName = new Map(queues.map((q) => [q.name, q]));
  return unservedQueues(queues, servers).map((name) => {
    const q = byName.get(name)!;
    const waiting = q.pending + q.scheduled + q.retry;
    return `NOT SERVED: queue ${name}: no live worker serves it${waiting ? ` (${waiting} task(s) wait for one)` : ''}`;
  });
}

/** `, N OVERDUE (holding M tasks)` when some servers' presence passed (ServerInfo.state), else nothing. */
function overdueText(servers: ServerInfo[]): string {
  const overdue = servers.filter((x) => x.state === 'overdue');
  if (overdue.length === 0) return '';
  return `, ${overdue.length} OVERDUE (holding ${overdue.reduce((n, x) => n + (x.pending ?? 0), 0)} tasks)`;
}

export function serverTable(servers: ServerInfo[]): string {
  if (servers.length === 0) return 'No live worker servers.';
  return table(
    ['server', 'state', 'host', 'pid', 'queues', 'concurrency', 'active', 'processed', 'failed', 'started', 'heartbeat'],
    servers.map((s) => [
      s.id,
      s.state === 'overdue' ? `OVERDUE (holds ${s.pending ?? 0})` : s.state,
      s.host,
      s.pid,
      Object.entries(s.queues)
        .map(([q, w]) => `${q}:${w}`)
        .join(' '),
      s.concurrency,
      s.active,
      s.processed,
      s.failed,
      when(s.startedAt),
      when(s.heartbeatAt),
    ]),
  );
}

/** @throws UsageError naming the first of `flags` given (a value) without the `mode` flag they belong to. */
function onlyWith(mode: string, on: boolean | undefined, flags: Record<string, string | undefined>): void {
  if (on) return;
  for (const [flag, value] of Object.entries(flags))
    if (value !== undefined) throw new UsageError(`${flag}: only with ${mode} (stats ${mode} ${flag} ${value})`);
}

/** `stats`, `queue ls|show|pause|resume|limits`, `leader`, `servers`. */
export function overviewCommands(program: Command, run: Run): void {
  program
    .command('stats')
    .description('everything at a glance: Redis, leader, workers, schedules, queues')
    .option('--watch', 'refresh until interrupted')
    .option('--interval <ms>', 'refresh interval with --watch, ms (default: 2000)')
    .option('--iterations <n>', 'with --watch, stop after n refreshes')
    .option(
      '--history',
      'processed / failed / lost / depth / latency per minute of the last hour (or --window day: per hour of the last day)',
    )
    .option('--window <window>', 'with --history: hour (60 minutes) or day (24 hours) (default: hour)')
    .option('--queue <name>', 'with --history: one queue instead of the total')
    .action(
      run(
        async (cli, o: { watch?: boolean; interval?: string; iterations?: string; history?: boolean; window?: string; queue?: string }) => {
          onlyWith('--history', o.history, { '--queue': o.queue, '--window': o.window });
          onlyWith('--watch', o.watch, { '--interval': o.interval, '--iterations': o.iterations });
          const interval = positiveInt(o.interval ?? '2000', '--interval');
          const iterations = o.iterations === undefined ? Infinity : positiveInt(o.iterations, '--iterations');
          const window = parseWindow(o.window ?? 'hour');
          const inspector = o.history && o.queue !== undefined ? await cli.knownQueue(o.queue) : await cli.inspector(o.watch === true);
          for (let i = 0; ; i++) {
            if (o.history) {
              const h = o.queue === undefined ? await inspector.history(window) : await inspector.queueHistory(o.queue, window);
              cli.print(h, () => historyText(h));
              if (!o.watch || i + 1 >= iterations) return;
              await new Promise((r) => setTimeout(r, interval));
              continue;
            }
            const s = await snapshot(inspector);
            if (o.watch && !cli.json && process.stdout.isTTY) cli.out.write('\x1b[2J\x1b[H');
            cli.print(s, () => statsText(s));
            if (!o.watch || i + 1 >= iterations) return;
            await new Promise((r) => setTimeout(r, interval));
          }
        },
      ),
    );

  const queue = program.command('queue').description('queues: list, show, pause, resume, limits');
  queue
    .command('ls')
    .description('every queue with its counts, latency and memory')
    .action(
      run(async (cli) => {
        const queues = await (await cli.inspector()).queues();
        cli.print(queues, () => queueTable(queues));
      }),
    );
  queue
    .command('show <name>')
    .description('one queue: counts, latency, memory, limits and groups, and the last 7 days')
    .action(
      run(async (cli, name: string) => {
        const q = await (await cli.knownQueue(name)).queue(name);
        cli.print(q, () =>
          [
            queueTable([q]),
            limitsText(q),
            table(
              ['day (UTC)', 'processed', 'failed', 'lost'],
              q.days.map((d) => [d.day, d.processed, d.failed, d.lost]),
            ),
          ]
            .filter((x) => x !== undefined)
            .join('\n'),
        );
      }),
    );
  limitsCommands(queue, run);
  for (const [verb, past] of [
    ['pause', 'Paused'],
    ['resume', 'Resumed'],
  ] as const) {
    queue
      .command(`${verb} <name>`)
      .description(verb === 'pause' ? 'stop every worker fetching from the queue (enqueues still work)' : 'resume a paused queue')
      .option('--force', `${verb} a queue not known yet (before its first task)`)
      .action(
        run(async (cli, name: string, o: { force?: boolean }) => {
          const hint = `; pass --force to ${verb} it before its first task`;
          const inspector = o.force ? await cli.inspector() : await cli.knownQueue(name, hint, `queue.${verb}`);
          const changed =
            verb === 'pause'
              ? await inspector.pauseQueue(name, { actor: cli.actor })
              : await inspector.resumeQueue(name, { actor: cli.actor });
          const was = verb === 'pause' ? 'was already paused' : 'was not paused';
          const said = changed ? `${past} queue ${name}.` : `Queue ${name} ${was}: nothing changed.`;
          cli.print({ queue: name, paused: verb === 'pause', changed }, () => said);
        }),
      );
  }

  program
    .command('leader')
    .description("the shards' leaders: the instance leading the most, its term, since, lease time left, and every shard's")
    .action(
      run(async (cli) => {
        const l = await (await cli.inspector()).leader();
        cli.print(l, () =>
          l
            ? fields([
                ['instance', l.instance],
                ['term', l.term],
                ['since', when(l.since)],
                ['lease left', duration(l.ttlMs)],
                ['shards', `${l.shards.length}/${SHARD_COUNT} led (${shardsBy(l)})`],
              ])
            : leaderLine(null),
        );
      }),
    );
  program
    .command('servers')
    .description(
      'worker servers: state (live, or overdue: stopped ticking, with the tasks it holds), host, pid, queues, concurrency, active, heartbeat',
    )
    .action(
      run(async (cli) => {
        const servers = await (await cli.inspector()).servers();
        cli.print(servers, () => serverTable(servers));
      }),
    );
}
