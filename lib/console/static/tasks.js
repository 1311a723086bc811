// Tasks by state (cursor pages, filters, dead groups, acts on one/selection/all) and a task's detail.
import { act, api, duration, enc, go, html, Notice, useApi, useEffect, useState, when } from './lib.js';
import { LimitsPanel } from './limits.js';
import { HistoryPanel } from './charts.js';

const STATES = ['pending', 'active', 'scheduled', 'retry', 'dead'];
/** The acts possible on a task of each state. */
const ACTS = {
  pending: ['delete'],
  active: ['cancel'],
  scheduled: ['run', 'delete'],
  retry: ['run', 'delete'],
  dead: ['retry', 'delete'],
};
const BULK = { pending: ['delete'], active: [], scheduled: ['run', 'delete'], retry: ['run', 'delete'], dead: ['retry', 'delete'] };
/** The server's name of an act on a task (what `can` is asked). */
const actName = (a) => (a === 'retry' ? 'dead.retry' : 'task.' + a);

export function SearchBox({ onFind }) {
  const [id, setId] = useState('');
  const submit = (e) => {
    e.preventDefault();
    if (id.trim()) onFind(id.trim());
  };
  return html`<form class="search" onSubmit=${submit} role="search">
    <input data-testid="search" placeholder="find a task by id" value=${id} onInput=${(e) => setId(e.target.value)} />
    <button type="submit">Find</button>
  </form>`;
}

/** How long an active task's handler has run (from its server's heartbeat); 'just started' until the server names it. */
function runningFor(t) {
  return t.startedAt ? duration(Math.max(0, Date.now() - t.startedAt)) : 'just started';
}

function DeadGroups({ queue, tick, onPick }) {
  const [groups, setGroups] = useState(null);
  useApi(`dead-groups?queue=${enc(queue)}`, [tick], setGroups, () => setGroups(null));
  if (!groups || groups.groups.length === 0) return null;
  return html`<div class="card" data-testid="dead-groups">
    <h3>Dead tasks by error${groups.truncated ? ` (first ${groups.scanned})` : ''}</h3>
    <table>
      <thead>
        <tr>
          <th>count</th>
          <th>error</th>
          <th>types</th>
          <th>last failed</th>
        </tr>
      </thead>
      <tbody>
        ${groups.groups.map(
          (g) =>
            html`<tr>
              <td>${g.count}</td>
              <td><button class="link error-text" data-testid="dead-group" onClick=${() => onPick(g.message)}>${g.message}</button></td>
              <td>${g.types.join(', ')}</td>
              <td>${when(g.lastFailedAt)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

export function TasksPage({ data, tick, query, readOnly, can = () => true, queue, state }) {
  const [listing, setListing] = useState(null);
  const [cursors, setCursors] = useState([]);
  const [selected, setSelected] = useState(new Set());
  const [notice, setNotice] = useState(null);
  const [version, setVersion] = useState(0);
  const type = query.get('type') ?? '';
  const error = query.get('error') ?? '';
  const group = query.get('group') ?? '';
  const cursor = cursors[cursors.length - 1];
  const filterQs = `${type ? '&type=' + enc(type) : ''}${error ? '&error=' + enc(error) : ''}${group ? '&group=' + enc(group) : ''}`;
  const filtered = Boolean(type || error || group);
  useEffect(() => setCursors([]), [queue, state, type, error, group]);
  // a selection is of the listing shown: another queue, state, filter or page drops it, so that no
  // button acts on tasks the operator no longer sees (trial 15: "retry 2 selected" outlived a filter)
  useEffect(() => setSelected(new Set()), [queue, state, type, error, group, cursor]);
  // 120 characters of each payload (the server cuts them: a payload may be 1 MB, and the listing is read at every poll)
  const qs = `state=${state}&limit=25&preview=120${cursor ? '&cursor=' + enc(cursor) : ''}${filterQs}`;
  // the listing shown is of this tab, filter, queue and page only: none while it loads (the last one
  // would be shown under this tab's acts), and one of another that answers late never (useApi)
  const path = `queues/${enc(queue)}/tasks?${qs}`;
  useApi(
    path,
    [tick, version],
    (p) => setListing({ path, page: p }),
    (err) => setNotice({ text: err.message, error: true }),
  );
  const page = listing?.path === path ? listing.page : null;
  const refresh = () => (setSelected(new Set()), setVersion((v) => v + 1));
  const base = `#/queues/${enc(queue)}/${state}`;
  const setFilter = (t, e, g = group) =>
    go(`${base}?${new URLSearchParams({ ...(t ? { type: t } : {}), ...(e ? { error: e } : {}), ...(g ? { group: g } : {}) })}`);
  const info = data.queues.find((q) => q.name === queue);
  const acts = readOnly ? [] : ACTS[state].filter((a) => can(actName(a)));
  const bulk = readOnly ? [] : BULK[state].filter((a) => can(actName(a)));
  const one = (action, id) =>
    act(setNotice, `${action} ${id}`, () => api(`queues/${enc(queue)}/tasks/act`, { action, state, ids: [id] }), refresh);
  const some = (action) =>
    act(
      setNotice,
      `${action} ${selected.size} selected`,
      () => api(`queues/${enc(queue)}/tasks/act`, { action, state, ids: [...selected] }),
      refresh,
    );
  // pending tasks waiting in a group (README "Limits and groups"): counted, but neither listed nor reached by "all"
  const grouped = state === 'pending' ? (info?.groups?.waiting ?? 0) : 0;
  const all = (action) => {
    const unreached = grouped ? ` (the ${grouped} tasks waiting in groups are not ${action === 'delete' ? 'deleted' : 'touched'})` : '';
    const what = `${action} ALL ${state} tasks of ${queue}${type ? ` of type ${type}` : ''}${error ? ` whose error contains "${error}"` : ''}${group ? ` in group ${group}` : ''}${unreached}`;
    if (!confirm(`Really ${what}?`)) return;
    act(setNotice, `${action} all`, () => api(`queues/${enc(queue)}/tasks/act`, { action, state, all: true, type, error, group }), refresh);
  };
  const toggle = (id) => {
    const s = new Set(selected);
    s.has(id) ? s.delete(id) : s.add(id);
    setSelected(s);
  };
  return html`<section data-testid="tasks">
    <h2>
      Queue
      <select data-testid="queue-select" value=${queue} onChange=${(e) => go(`#/queues/${enc(e.target.value)}/${state}`)}>
        ${data.queues.map((q) => html`<option value=${q.name}>${q.name}</option>`)}
        ${!info && html`<option value=${queue}>${queue}</option>`}
      </select>
      ${info?.paused && html`<span class="badge paused">paused</span>`}
      ${
        !readOnly &&
        info &&
        can(info.paused ? 'queue.resume' : 'queue.pause') &&
        html`<button
          onClick=${() => act(setNotice, info.paused ? 'resume' : 'pause', () => api(`queues/${enc(queue)}/${info.paused ? 'resume' : 'pause'}`, {}))}
        >
          ${info.paused ? 'Resume queue' : 'Pause queue'}
        </button>`
      }
    </h2>
    <${LimitsPanel} info=${info} readOnly=${readOnly || !can('queue.limits')} setNotice=${setNotice} refresh=${refresh} />
    <nav class="tabs">
      ${STATES.map(
        (s) =>
          html`<a class=${s === state ? 'active' : ''} data-testid=${'tab-' + s} href=${`#/queues/${enc(queue)}/${s}`}>
            ${s} ${info ? html`<span class="count">${info[s]}</span>` : ''}</a
          >`,
      )}
    </nav>
    <${HistoryPanel} queue=${queue} tick=${tick} />
    <${Notice} notice=${notice} />
    ${
      grouped > 0 &&
      html`<p class="muted" data-testid="grouped-note">
        ${grouped} of the ${info.pending} pending tasks wait in groups: counted here, but not listed below (the groups with the most are
        above), and "delete all" does not reach them.
      </p>`
    }
    ${state === 'dead' && html`<${DeadGroups} queue=${queue} tick=${tick} onPick=${(msg) => setFilter(type, msg)} />`}
    ${
      (state === 'dead' || state === 'retry' || state === 'scheduled') &&
      html`<form
        class="filters"
        onSubmit=${(e) => {
          e.preventDefault();
          setFilter(e.target.type.value.trim(), e.target.error.value.trim(), e.target.group.value.trim());
        }}
      >
        <input name="type" data-testid="filter-type" placeholder="type" value=${type} />
        <input name="error" data-testid="filter-error" placeholder="error contains" value=${error} />
        <input name="group" data-testid="filter-group" placeholder="group" value=${group} />
        <button type="submit">Filter</button> ${filtered && html`<a href=${base}>clear</a>`}
      </form>`
    }
    ${
      (bulk.length > 0 || (acts.length > 0 && selected.size > 0)) &&
      html`<div class="bulk">
        ${selected.size > 0 && acts.map((a) => html`<button data-testid=${'selected-' + a} onClick=${() => some(a)}>${a} ${selected.size} selected</button>`)}
        ${bulk.map((a) => html`<button class="danger" data-testid=${'all-' + a} onClick=${() => all(a)}>${a} all${filtered ? ' matching' : ''}</button>`)}
      </div>`
    }
    <table data-testid="task-table">
      <thead>
        <tr>
          ${acts.length > 0 && html`<th></th>`}
          <th>id</th>
          <th>type</th>
          <th>payload</th>
          <th>${state === 'dead' ? 'failed' : state === 'active' ? 'running for' : 'due / enqueued'}</th>
          <th>retried</th>
          ${state === 'dead' || state === 'retry' ? html`<th>error</th>` : null}${acts.length > 0 && html`<th>acts</th>`}
        </tr>
      </thead>
      <tbody>
        ${
          page &&
          page.tasks.length === 0 &&
          html`<tr>
            <td colspan="8" class="muted">No ${state} tasks.</td>
          </tr>`
        }
        ${page?.tasks.map(
          (t) =>
            html`<tr data-task=${t.id}>
              ${acts.length > 0 && html`<td><input type="checkbox" checked=${selected.has(t.id)} onChange=${() => toggle(t.id)} /></td>`}
              <td><a href=${`#/tasks/${enc(t.id)}?queue=${enc(queue)}`}>${t.id}</a></td>
              <td>${t.type}</td>
              <td><code class="payload" title=${`${t.payloadBytes} bytes`}>${t.payloadPreview}</code></td>
              <td data-testid="when">${state === 'active' ? runningFor(t) : when(t.at ?? t.enqueuedAt)}</td>
              <td>${t.retried}/${t.maxRetry}</td>
              ${state === 'dead' || state === 'retry' ? html`<td class="error-text">${(t.lastError ?? '').split('\n')[0]}${t.reason ? ` (${t.reason})` : ''}</td>` : null}
              ${acts.length > 0 && html`<td>${acts.map((a) => html`<button data-testid=${'act-' + a} onClick=${() => one(a, t.id)}>${a}</button> `)}</td>`}
            </tr>`,
        )}
      </tbody>
    </table>
    <p class="pager">
      ${cursors.length > 0 && html`<button onClick=${() => setCursors(cursors.slice(0, -1))}>← previous</button>`}
      ${page?.cursor && html`<button data-testid="next-page" onClick=${() => setCursors([...cursors, page.cursor])}>next →</button>`}
    </p>
  </section>`;
}

export function TaskPage({ query, readOnly, can = () => true, id }) {
  const [task, setTask] = useState(undefined);
  const [notice, setNotice] = useState(null);
  const [version, setVersion] = useState(0);
  const queue = query.get('queue');
  useEffect(() => setTask(undefined), [id, queue, version]);
  useApi(`tasks/${enc(id)}${queue ? '?queue=' + enc(queue) : ''}`, [version], setTask, (err) => setTask({ missing: err.message }));
  if (task === undefined) return html`<p class="muted">Looking for task ${id}…</p>`;
  if (task.missing)
    return html`<section data-testid="task-missing">
      <h2>Task ${id}</h2>
      <p class="warning">${task.missing}</p>
    </section>`;
  const acts = readOnly ? [] : ACTS[task.state].filter((a) => can(actName(a)));
  const run = (action) =>
    act(
      setNotice,
      action,
      () => api(`queues/${enc(task.queue)}/tasks/act`, { action, state: task.state, ids: [task.id] }),
      () => setVersion((v) => v + 1),
    );
  const meta = [
    ['queue', html`<a href=${`#/queues/${enc(task.queue)}/${task.state}`}>${task.queue}</a>`],
    ['state', task.state],
    ['type', task.type],
    task.group && ['group', task.group],
    ['retried', `${task.retried} of ${task.maxRetry}`],
    ['timeout', task.timeoutMs ? duration(task.timeoutMs) : 'none'],
    ['enqueued', when(task.enqueuedAt)],
    task.at && ['due / failed at', when(task.at)],
    task.reason && ['dead because', task.reason],
    task.crashes && ['reclaimed after crashes', task.crashes],
    task.consumer && ['held by', `${task.consumer} (claim renewed ${duration(task.idleMs)} ago)`],
    task.state === 'active' && ['running for', runningFor(task)],
    task.schedule && [
      'trigger of',
      html`<a data-testid="schedule-link" href=${'#/schedules/' + enc(task.schedule)}>${task.schedule}</a> at ${when(task.triggerAt)}`,
    ],
    task.entryId && ['stream entry', task.entryId],
  ].filter(Boolean);
  return html`<section data-testid="task-detail">
    <h2>Task <code>${task.id}</code></h2>
    <${Notice} notice=${notice} />
    <p>${acts.map((a) => html`<button data-testid=${'detail-' + a} onClick=${() => run(a)}>${a}</button> `)}</p>
    <dl class="meta">
      ${meta.map(
        ([k, v]) =>
          html`<dt>${k}</dt>
            <dd>${v}</dd>`,
      )}
    </dl>
    <h3>Payload</h3>
    ${task.payloadError && html`<p class="warning">${task.payloadError}</p>`}
    <pre data-testid="payload">${typeof task.payload === 'string' ? task.payload : JSON.stringify(task.payload, null, 2)}</pre>
    ${
      task.lastError &&
      html`<h3>Last error${task.failedAt ? ` (${when(task.failedAt)})` : ''}</h3>
        <pre class="error-text" data-testid="error">${task.lastError}</pre>`
    }
  </section>`;
}
