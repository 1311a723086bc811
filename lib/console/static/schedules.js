// Schedules: spec in words, next runs, last fire and outcome, liveness; pause with a note, resume, trigger now, remove; history.
import { act, api, enc, fired, html, Notice, useApi, useEffect, useState, when } from './lib.js';
import { Activity, useActivity } from './charts.js';

function Liveness({ s }) {
  if (s.error) return html`<span class="badge bad">unreadable</span>`;
  if (s.orphaned) return html`<span class="badge bad" title="no live instance declares it: it does not fire">orphaned</span>`;
  if (s.paused) return html`<span class="badge paused" data-testid="paused">paused</span>`;
  if (s.ended) return html`<span class="badge paused" data-testid="ended" title=${ENDED[s.ended]}>ended</span>`;
  return html`<span class="badge ok">live</span>`;
}

/** Why an ended schedule fires no more (ScheduleInfo `ended`). */
const ENDED = { 'end-at': 'past its endAt', 'max-runs': 'its maxRuns reached' };

const LOCAL_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

/** An instant in the schedule's own zone (`03:00 Europe/Budapest`), when it is not the browser's; '' otherwise. */
function inZone(ms, zone) {
  if (!ms || !zone || zone === LOCAL_ZONE) return '';
  try {
    const f = new Intl.DateTimeFormat(undefined, { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    const day = new Intl.DateTimeFormat(undefined, { timeZone: zone, month: 'short', day: 'numeric' });
    return `${day.format(ms)} ${f.format(ms)} ${zone}`;
  } catch {
    return '';
  }
}

/** A next run: local time, and the schedule's zone beside it when it differs. */
function NextRun({ ms, zone }) {
  const there = inZone(ms, zone);
  return html`<div>${when(ms)}${there && html` <span class="muted" data-testid="zone-time">· ${there}</span>`}</div>`;
}

/** Why a schedule shows no next run (it does not fire): 'unreadable', 'orphaned', 'paused', 'ended (…)'; undefined when it fires. */
function notFiring(s) {
  if (s.error) return 'unreadable';
  if (s.orphaned) return 'orphaned';
  if (s.paused) return 'paused';
  return s.ended ? `ended (${ENDED[s.ended]})` : undefined;
}

function Acts({ s, readOnly, can = () => true, setNotice, after }) {
  if (readOnly) return null;
  const post = (verb, body = {}) => api(`schedules/${enc(s.name)}/${verb}`, body);
  const pause = () => {
    const note = prompt(`Pause ${s.name}: a note for the other operators (optional)`, '');
    if (note === null) return;
    act(setNotice, `pause ${s.name}`, () => post('pause', { note }), after);
  };
  const remove = () => {
    const forced = s.runtime || s.orphaned ? '' : ' Live instances declare it in code: it is removed by force.';
    if (!confirm(`Remove schedule ${s.name}?${forced}`)) return;
    act(setNotice, `remove ${s.name}`, () => post('remove', { force: !(s.runtime || s.orphaned) }), after);
  };
  return html`<span class="acts">
    ${
      s.paused
        ? can('schedule.resume') &&
          html`<button data-testid="resume" onClick=${() => act(setNotice, `resume ${s.name}`, () => post('resume'), after)}>
            resume
          </button>`
        : can('schedule.pause') && html`<button data-testid="pause" onClick=${pause}>pause</button>`
    }
    ${
      can('schedule.trigger') &&
      html`<button data-testid="trigger" onClick=${() => act(setNotice, `trigger ${s.name}`, () => post('trigger'), after)}>
        trigger now
      </button>`
    }
    ${can('schedule.remove') && html`<button class="danger" data-testid="remove" onClick=${remove}>remove</button>`}
  </span>`;
}

function lastOutcome(s, history) {
  const h = history?.[0];
  return h ? `${h.outcome}${h.task ? ' · task ' + h.task : ''}` : s.lastFiredAt ? 'fired' : 'never fired';
}

/** Schedules per page of the schedules page (GET api/schedule-page). */
const PAGE_SIZE = 100;

/** No filter, the first page. */
const ALL = { labels: '', prefix: '', state: '', cursor: null };

/** The query of a page: `tenant=acme kind=digest` (labels, all of them), a name prefix, a state, the cursor, and the page size. */
function pageQuery({ labels, prefix, state, cursor }) {
  const q = new URLSearchParams();
  for (const l of labels.split(/\s+/).filter(Boolean)) q.append('label', l);
  if (prefix.trim()) q.set('prefix', prefix.trim());
  if (state) q.set('state', state);
  if (cursor) q.set('cursor', cursor);
  q.set('limit', String(PAGE_SIZE));
  return q.toString();
}

/**
 * The schedules shown: one page of GET api/schedule-page at a time (read again with every poll), with
 * the label, prefix and state filter; the whole registry is never read by the page.
 */
function usePage(tick) {
  const [labels, setLabels] = useState('');
  const [prefix, setPrefix] = useState('');
  const [state, setState] = useState('');
  const [applied, setApplied] = useState(ALL);
  const [page, setPage] = useState(null);
  const query = pageQuery(applied);
  useApi('schedule-page?' + query, [tick], setPage, (err) => setPage({ error: err.message, items: [], cursor: null }));
  const filtered = applied.labels || applied.prefix || applied.state;
  const form = html`<form
    class="filter"
    data-testid="schedule-filter"
    onSubmit=${(e) => {
      e.preventDefault();
      setApplied({ labels, prefix, state, cursor: null });
    }}
  >
    <input
      data-testid="filter-labels"
      placeholder="labels: tenant=acme kind=digest"
      value=${labels}
      onInput=${(e) => setLabels(e.target.value)}
    />
    <input data-testid="filter-prefix" placeholder="name prefix" value=${prefix} onInput=${(e) => setPrefix(e.target.value)} />
    <select data-testid="filter-state" value=${state} onChange=${(e) => setState(e.target.value)}>
      <option value="">any state</option>
      <option value="active">active</option>
      <option value="paused">paused</option>
      <option value="orphaned">orphaned</option>
      <option value="ended">ended</option>
    </select>
    <button type="submit" data-testid="filter-apply">filter</button>
    ${
      filtered &&
      html`<button
        type="button"
        data-testid="filter-clear"
        onClick=${() => {
          setLabels('');
          setPrefix('');
          setState('');
          setApplied(ALL);
        }}
      >
        clear
      </button>`
    }
    ${page?.error && html`<span class="notice error" data-testid="filter-error">${page.error}</span>`}
  </form>`;
  const pager = html`<p class="pager" data-testid="schedule-pager">
    ${applied.cursor && html`<button type="button" data-testid="page-first" onClick=${() => setApplied({ ...applied, cursor: null })}>first page</button>`}
    ${page?.cursor && html`<button type="button" data-testid="filter-next" onClick=${() => setApplied({ ...applied, cursor: page.cursor })}>next page</button>`}
  </p>`;
  return { form, pager, page, query };
}

function Labels({ s }) {
  const entries = Object.entries(s.labels ?? {});
  if (entries.length === 0) return null;
  return html`<div data-testid="labels">${entries.map(([k, v]) => html`<span class="badge">${k}=${v}</span> `)}</div>`;
}

/** `100 shown (100 a page, by name) · 152 schedules in all, 1 paused, 0 orphaned` (the counts from the overview). */
function pageInfo(page, counts) {
  const shown = page ? `${page.items.length} shown (${PAGE_SIZE} a page, by name)` : 'Loading…';
  return `${shown} · ${counts.total} schedule${counts.total === 1 ? '' : 's'} in all, ${counts.paused} paused, ${counts.orphaned} orphaned`;
}

export function SchedulesPage({ data, readOnly, can, tick }) {
  const [notice, setNotice] = useState(null);
  const { form, pager, page, query } = usePage(tick);
  const activity = useActivity(tick, query);
  const list = page?.items ?? [];
  const counts = data.schedules;
  return html`<section data-testid="schedules">
    <h2>Schedules</h2>
    <${Notice} notice=${notice} />
    ${form}
    <p class="muted" data-testid="page-info">${pageInfo(page, counts)}</p>
    <table>
      <thead>
        <tr>
          <th>schedule</th>
          <th>when</th>
          <th>queue · type</th>
          <th>next runs</th>
          <th>last fired</th>
          <th>recent fires</th>
          <th>state</th>
          <th>origin</th>
          ${!readOnly && html`<th>acts</th>`}
        </tr>
      </thead>
      <tbody>
        ${
          page &&
          list.length === 0 &&
          html`<tr>
            <td colspan="9" class="muted">No schedules.</td>
          </tr>`
        }
        ${list.map(
          (s) =>
            html`<tr data-schedule=${s.name}>
              <td><a href=${'#/schedules/' + enc(s.name)}>${s.name}</a><${Labels} s=${s} /></td>
              <td><span data-testid="spec-words">${s.description}</span><br /><code class="muted">${s.expression}</code></td>
              <td>${s.queue} · ${s.type}</td>
              <td data-testid="next-runs">
                ${notFiring(s) ? html`<span class="muted">none: ${notFiring(s)}</span>` : s.next.slice(0, 2).map((n) => html`<${NextRun} ms=${n} zone=${s.timeZone} />`)}
              </td>
              <td data-testid="last-fired">${fired(s.lastFiredAt)}</td>
              <td><${Activity} a=${activity?.get(s.name)} /></td>
              <td>
                <${Liveness} s=${s} />
                ${s.pause?.note && html`<div class="muted" data-testid="pause-note">“${s.pause.note}” — ${s.pause.actor}</div>`}
              </td>
              <td>${s.origin}</td>
              ${!readOnly && html`<td><${Acts} s=${s} readOnly=${readOnly} can=${can} setNotice=${setNotice} /></td>`}
            </tr>`,
        )}
      </tbody>
    </table>
    ${pager}
  </section>`;
}

export function SchedulePage({ readOnly, can, name, tick }) {
  const [d, setD] = useState(null);
  const activity = useActivity(tick, 'name=' + enc(name));
  const [notice, setNotice] = useState(null);
  const [version, setVersion] = useState(0);
  useEffect(() => setD(null), [name]); // another schedule's page is not shown under this name while it loads
  useApi(`schedules/${enc(name)}`, [tick, version], setD, (err) => setD({ missing: err.message }));
  if (!d) return html`<p class="muted">Loading ${name}…</p>`;
  if (d.missing)
    return html`<section>
      <h2>Schedule ${name}</h2>
      <p class="warning">${d.missing}</p>
    </section>`;
  const s = d.schedule;
  const meta = [
    ['when', html`${s.description} <code>${s.expression}</code>`],
    ['time zone', s.timeZone],
    ['queue', s.queue],
    ['task type', s.type],
    ['catch-up', s.catchUp],
    ['overlap', s.overlap],
    s.jitterMs !== undefined && ['jitter', `${s.jitterMs} ms`],
    s.startAt !== undefined && ['starts at', when(s.startAt)],
    s.endAt !== undefined && ['ends at', `${when(s.endAt)} (exclusive)`],
    s.maxRuns !== undefined && ['max runs', `${s.maxRuns} (${s.runsLeft ?? s.maxRuns} left)`],
    s.buffered && ['buffered', `${s.buffered.taskId} (trigger ${when(s.buffered.triggerAt)}), waiting behind ${s.buffered.behind}`],
    ['origin', s.origin],
    s.labels && ['labels', html`<${Labels} s=${s} />`],
    ['last fired', fired(s.lastFiredAt)],
    ['last outcome', lastOutcome(s, d.history)],
    ['next due', notFiring(s) ? `none: ${notFiring(s)}` : when(s.nextDueAt)],
    [
      'declared by',
      s.declaredBy.map((i) => `${i.instance} (${i.alive ? 'alive' : 'gone'}, seen ${when(i.lastSeenAt)})`).join('; ') || 'none',
    ],
    s.pause && ['paused', `“${s.pause.note}” by ${s.pause.actor} at ${when(s.pause.at)}`],
    s.error && ['error', s.error],
  ].filter(Boolean);
  return html`<section data-testid="schedule-detail">
    <h2>Schedule ${s.name} <${Liveness} s=${s} /></h2>
    <${Notice} notice=${notice} />
    <p><${Acts} s=${s} readOnly=${readOnly} can=${can} setNotice=${setNotice} after=${() => setVersion((v) => v + 1)} /></p>
    <dl class="meta">
      ${meta.map(
        ([k, v]) =>
          html`<dt>${k}</dt>
            <dd>${v}</dd>`,
      )}
    </dl>
    <h3>Recent fires</h3>
    <${Activity} a=${activity?.get(s.name)} />
    <h3>Next runs</h3>
    <ul data-testid="next-runs">
      ${notFiring(s) ? html`<li class="muted">none: the schedule is ${notFiring(s)}</li>` : s.next.map((n) => html`<li><${NextRun} ms=${n} zone=${s.timeZone} /></li>`)}
    </ul>
    <h3>Fire history</h3>
    <table data-testid="history">
      <thead>
        <tr>
          <th>trigger</th>
          <th>recorded</th>
          <th>outcome</th>
          <th>by</th>
          <th>task</th>
          <th>now</th>
        </tr>
      </thead>
      <tbody>
        ${
          d.history.length === 0 &&
          html`<tr>
            <td colspan="6" class="muted">No fires yet.</td>
          </tr>`
        }
        ${d.history.map(
          (h) =>
            html`<tr>
              <td>${when(h.triggerAt)}</td>
              <td>${when(h.at)}</td>
              <td>${h.outcome}${h.count > 1 ? ` ×${h.count}` : ''}</td>
              <td>${h.by ?? '-'}</td>
              <td>${h.taskId ? html`<a href=${`#/tasks/${enc(h.taskId)}?queue=${enc(s.queue)}`}>${h.taskId}</a>` : '-'}</td>
              <td>${h.task ?? '-'}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}
