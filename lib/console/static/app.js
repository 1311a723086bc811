// The Chronos console page: one aggregated poll (GET api/overview, bounded: schedules counted, not listed) every few seconds, hash routes.
import { api, bytes, duration, go, html, render, route, useEffect, useState, when } from './lib.js';
import { SchedulesPage, SchedulePage } from './schedules.js';
import { TaskPage, TasksPage, SearchBox } from './tasks.js';
import { StateBadge } from './limits.js';
import { HistoryPanel } from './charts.js';
import { AuditPage } from './audit.js';

const POLL_MS = 3000;

function Chart({ days }) {
  // 7 UTC days, processed (bar) and failed (red bar) scaled to the busiest day; SVG, no library needed
  const max = Math.max(1, ...days.map((d) => Math.max(d.processed, d.failed)));
  const w = 12;
  return html`<svg
    class="chart"
    width=${days.length * (2 * w + 4)}
    height="32"
    role="img"
    aria-label=${'7 days: ' + days.map((d) => `${d.day} ${d.processed} processed ${d.failed} failed`).join('; ')}
  >
    ${days.map((d, i) => {
      const p = Math.round((d.processed / max) * 30);
      const f = Math.round((d.failed / max) * 30);
      return html`<g>
        <title>${d.day}: ${d.processed} processed, ${d.failed} failed</title>
        <rect class="ok" x=${i * (2 * w + 4)} y=${32 - p} width=${w} height=${p} />
        <rect class="bad" x=${i * (2 * w + 4) + w} y=${32 - f} width=${w} height=${f} />
      </g>`;
    })}
  </svg>`;
}

function Overview({ data, tick }) {
  const { queues, leader, servers, redis, schedules, warnings } = data;
  // the shards each instance leads (docs/scheduler-shards.md), when more than one leads
  const shardsBy = (l) => {
    const by = new Map();
    for (const s of l.shards) by.set(s.instance, (by.get(s.instance) ?? 0) + 1);
    return by.size > 1 ? ': ' + [...by].map(([i, n]) => `${i} ${n}`).join(', ') : '';
  };
  return html`<section data-testid="overview">
    ${warnings.map((w) => html`<p class="warning" data-testid=${w.schedule ? 'silent-schedule' : 'warning'}>⚠ ${w.message}</p>`)}
    <${HistoryPanel} tick=${tick} />
    <h2>Queues</h2>
    <table data-testid="queues">
      <thead>
        <tr>
          <th>queue</th>
          <th>state</th>
          <th>pending</th>
          <th>active</th>
          <th>scheduled</th>
          <th>retry</th>
          <th>dead</th>
          <th>latency</th>
          <th>today</th>
          <th>7 days (processed / failed)</th>
          <th>memory</th>
        </tr>
      </thead>
      <tbody>
        ${
          queues.length === 0 &&
          html`<tr>
            <td colspan="11" class="muted">No queues yet.</td>
          </tr>`
        }
        ${queues.map(
          (q) =>
            html`<tr data-queue=${q.name}>
              <td><a href=${'#/queues/' + encodeURIComponent(q.name) + '/pending'}>${q.name}</a></td>
              <td><${StateBadge} q=${q} /></td>
              ${['pending', 'active', 'scheduled', 'retry', 'dead'].map(
                (s) => html`<td><a data-testid=${'count-' + s} href=${'#/queues/' + encodeURIComponent(q.name) + '/' + s}>${q[s]}</a></td>`,
              )}
              <td data-testid="latency">
                ${q.pending - (q.groups?.waiting ?? 0) > 0 ? duration(q.latencyMs) : q.pending ? 'in groups' : '-'}
              </td>
              <td>${q.processedToday} ok · ${q.failedToday} failed</td>
              <td><${Chart} days=${q.days} /></td>
              <td>${bytes(q.memoryBytes)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    <div class="cards">
      <div class="card" data-testid="leader">
        <h3>Leader</h3>
        ${
          leader
            ? html`<p><strong>${leader.instance}</strong></p>
                <p>term ${leader.term} · since ${when(leader.since)}</p>
                <p class="muted">lease ${duration(leader.ttlMs)} left</p>
                <p class="muted" data-testid="shards">${leader.shards.length}/16 shards led${shardsBy(leader)}</p>`
            : html`<p class="warning">No leader: no scheduler leads a shard of the schedules, they do not fire.</p>`
        }
      </div>
      <div class="card">
        <h3>Servers</h3>
        <p><a href="#/servers">${servers.length} live worker server${servers.length === 1 ? '' : 's'}</a></p>
        <p class="muted">${servers.reduce((n, s) => n + s.active, 0)} active of ${servers.reduce((n, s) => n + s.concurrency, 0)} slots</p>
      </div>
      <div class="card" data-testid="schedule-counts">
        <h3>Schedules</h3>
        <p><a href="#/schedules">${schedules.total} schedule${schedules.total === 1 ? '' : 's'}</a></p>
        <p class="muted">${schedules.paused} paused · ${schedules.orphaned} orphaned · ${schedules.ended} ended</p>
        <p class=${schedules.silent ? 'warning' : 'muted'}>${schedules.silent} silent</p>
      </div>
      <div class="card" data-testid="redis">
        <h3>Redis</h3>
        <p>${redis.version} ${redis.mode} ${redis.role}</p>
        <p>${bytes(redis.usedMemoryBytes)} ${redis.maxMemoryBytes ? 'of ' + bytes(redis.maxMemoryBytes) : '(no maxmemory)'}</p>
        <p class=${redis.warning ? 'warning' : 'muted'}>maxmemory-policy ${redis.maxMemoryPolicy}</p>
      </div>
    </div>
  </section>`;
}

function Servers({ data }) {
  return html`<section data-testid="servers">
    <h2>Servers</h2>
    <table>
      <thead>
        <tr>
          <th>server</th>
          <th>state</th>
          <th>host</th>
          <th>pid</th>
          <th>queues (weight)</th>
          <th>concurrency</th>
          <th>active</th>
          <th>processed</th>
          <th>failed</th>
          <th>uptime</th>
          <th>heartbeat</th>
        </tr>
      </thead>
      <tbody>
        ${
          data.servers.length === 0 &&
          html`<tr>
            <td colspan="11" class="muted">No live worker servers.</td>
          </tr>`
        }
        ${data.servers.map(
          (s) =>
            html`<tr>
              <td>${s.id}</td>
              <td>
                ${
                  s.state === 'overdue'
                    ? html`<span
                        class="badge bad"
                        data-testid="overdue"
                        title="its presence tick stopped (stopped, hung, busy or dead): its tasks run again elsewhere after the visibility timeout, or at once when it is found dead"
                        >overdue · holds ${s.pending ?? 0}</span
                      >`
                    : html`<span class="badge ok">live</span>`
                }
              </td>
              <td>${s.host}</td>
              <td>${s.pid}</td>
              <td>
                ${Object.entries(s.queues)
                  .map(([q, w]) => `${q} (${w})`)
                  .join(', ')}
              </td>
              <td>${s.concurrency}</td>
              <td>${s.active}</td>
              <td>${s.processed}</td>
              <td>${s.failed}</td>
              <td>${duration(data.now - s.startedAt)}</td>
              <td>${duration(Math.max(0, data.now - s.heartbeatAt))} ago</td>
            </tr>`,
        )}
      </tbody>
    </table>
    <h3>Scheduler instances</h3>
    <table>
      <thead>
        <tr>
          <th>instance</th>
          <th>last seen</th>
          <th>alive</th>
        </tr>
      </thead>
      <tbody>
        ${data.instances.map(
          (i) =>
            html`<tr>
              <td>${i.instance}</td>
              <td>${when(i.lastSeenAt)}</td>
              <td>${i.alive ? 'yes' : 'no'}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}

function App() {
  const [r, setRoute] = useState(route());
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const onHash = () => setRoute(route());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  useEffect(() => {
    let stopped = false;
    let timer;
    const poll = async () => {
      try {
        const d = await api('overview');
        if (!stopped) {
          setData(d);
          setError(null);
          setTick((t) => t + 1);
        }
      } catch (err) {
        if (!stopped) setError(err.message);
      }
      if (!stopped) timer = setTimeout(poll, POLL_MS);
    };
    poll();
    return () => ((stopped = true), clearTimeout(timer));
  }, []);
  const [page, ...rest] = r.parts;
  const current = (name) => page === name || (!page && name === 'overview');
  const nav = (name, hash, label) => html`<a class=${current(name) ? 'active' : ''} href=${hash}>${label}</a>`;
  const firstQueue = encodeURIComponent(data?.queues[0]?.name ?? 'default');
  let body = html`<p class="muted">Loading…</p>`;
  if (data) {
    // what the caller may do (the server's authorize(req, act)); with no act allowed the page is read-only
    const can = (act) => !data.readOnly && data.can?.[act] !== false;
    const readOnly = data.readOnly || (data.can !== undefined && !Object.values(data.can).some(Boolean));
    const props = { data, tick, query: r.query, readOnly, can };
    if (page === 'queues') body = html`<${TasksPage} ...${props} queue=${rest[0]} state=${rest[1] ?? 'pending'} />`;
    else if (page === 'tasks') body = html`<${TaskPage} ...${props} id=${rest[0]} />`;
    else if (page === 'schedules' && rest[0]) body = html`<${SchedulePage} ...${props} name=${rest[0]} />`;
    else if (page === 'schedules') body = html`<${SchedulesPage} ...${props} />`;
    else if (page === 'servers') body = html`<${Servers} data=${data} />`;
    else if (page === 'audit') body = html`<${AuditPage} ...${props} />`;
    else body = html`<${Overview} data=${data} tick=${tick} />`;
  }
  return html`<header>
      <h1>Chronos</h1>
      <nav>
        ${nav('overview', '#/', 'Overview')} ${nav('queues', `#/queues/${firstQueue}/pending`, 'Tasks')}
        ${nav('schedules', '#/schedules', 'Schedules')} ${nav('servers', '#/servers', 'Servers')} ${nav('audit', '#/audit', 'Audit')}
      </nav>
      <${SearchBox} onFind=${(id) => go('#/tasks/' + encodeURIComponent(id))} />
      <span class="muted" data-testid="namespace"
        >${data ? `namespace ${data.namespace}${data.readOnly ? ' · read-only' : data.can && !Object.values(data.can).some(Boolean) ? ' · view only' : ''}` : ''}</span
      >
    </header>
    ${error && html`<p class="notice error" data-testid="poll-error">Cannot reach the console API: ${error}</p>`}
    <main>${body}</main>`;
}

const root = document.getElementById('app');
root.textContent = ''; // the loading line (preact 11 renders next to what is there)
render(html`<${App} />`, root);
