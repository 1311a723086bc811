// The audit trail: every act (who, what, when, from where, the result), newest first, with filters.
import { enc, html, useApi, useEffect, useState, when } from './lib.js';

function target(e) {
  return (
    [e.queue && `queue ${e.queue}`, e.schedule && `schedule ${e.schedule}`, e.taskId && `task ${e.taskId}`, e.detail]
      .filter(Boolean)
      .join(' · ') || '-'
  );
}

export function AuditPage({ tick, query }) {
  const [page, setPage] = useState(null);
  const [cursors, setCursors] = useState([]);
  const [error, setError] = useState(null);
  const actor = query.get('actor') ?? '';
  const action = query.get('action') ?? '';
  const cursor = cursors[cursors.length - 1];
  useEffect(() => setCursors([]), [actor, action]);
  const qs = `limit=50${cursor ? '&cursor=' + enc(cursor) : ''}${actor ? '&actor=' + enc(actor) : ''}${action ? '&action=' + enc(action) : ''}`;
  useApi(
    `audit?${qs}`,
    [tick],
    (p) => (setPage(p), setError(null)),
    (err) => setError(err.message),
  );
  const filter = (e) => {
    e.preventDefault();
    const qs = new URLSearchParams();
    if (e.target.actor.value.trim()) qs.set('actor', e.target.actor.value.trim());
    if (e.target.action.value.trim()) qs.set('action', e.target.action.value.trim());
    location.hash = `#/audit?${qs}`;
  };
  return html`<section data-testid="audit">
    <h2>Audit trail</h2>
    <p class="muted">Every act through the console, the CLI or InspectorService, done or failed: kept 30 days, at most 10,000.</p>
    <form class="filters" onSubmit=${filter}>
      <input name="actor" data-testid="audit-actor" placeholder="actor" value=${actor} />
      <input name="action" data-testid="audit-action" placeholder="action (e.g. queue.pause)" value=${action} />
      <button type="submit">Filter</button> ${(actor || action) && html`<a href="#/audit">clear</a>`}
    </form>
    ${error && html`<p class="notice error">${error}</p>`}
    <table data-testid="audit-table">
      <thead>
        <tr>
          <th>when</th>
          <th>actor</th>
          <th>action</th>
          <th>on</th>
          <th>result</th>
          <th>from</th>
        </tr>
      </thead>
      <tbody>
        ${
          page &&
          page.entries.length === 0 &&
          html`<tr>
            <td colspan="6" class="muted">No acts recorded.</td>
          </tr>`
        }
        ${page?.entries.map(
          (e) =>
            html`<tr data-testid="audit-entry">
              <td>${when(e.at)}</td>
              <td>${e.actor}</td>
              <td><code>${e.action}</code></td>
              <td>${target(e)}</td>
              <td class=${e.result === 'failed' ? 'error-text' : ''}>
                ${e.result === 'done' ? `done${e.count !== undefined ? ` (${e.count})` : ''}` : `failed: ${e.error ?? ''}`}
              </td>
              <td class="muted">${e.origin ?? '-'}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    <p>
      ${cursors.length > 0 && html`<button onClick=${() => setCursors(cursors.slice(0, -1))}>newer</button>`}
      ${page?.cursor && html`<button data-testid="audit-older" onClick=${() => setCursors([...cursors, page.cursor])}>older</button>`}
    </p>
  </section>`;
}
