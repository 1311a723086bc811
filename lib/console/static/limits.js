// A queue's fleet-wide limits on its page (issue 21): the limits with the slots taken, the groups with
// the most waiting tasks, and a small form that sets them (an empty field clears that limit).
import { act, api, enc, html, useState } from './lib.js';

const rateText = (r) => (r ? `${r.max} per ${r.duration} ms` : '');
const rateOf = (text) => {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  return m ? { max: Number(m[1]), duration: Number(m[2]) } : text.trim() === '' ? null : text;
};
// a whole number, or the text as typed for the engine to refuse naming it: Number('abc') is NaN and
// Number('Infinity') Infinity, which JSON sends as null, "clear this limit" (trial 43); Number('0x10') is 16
const intOf = (text) => {
  const t = text.trim();
  return t === '' ? null : /^\d+$/.test(t) ? Number(t) : t;
};

/** The queue state badge of a list row: running, paused, or limited (by which limit). */
export function StateBadge({ q }) {
  if (q.paused) return html`<span class="badge paused">paused</span>`;
  if (q.state === 'limited')
    return html`<span class="badge limited" data-testid="limited" title=${'held back by ' + q.limitedBy}>limited</span>`;
  return html`<span class="badge ok">running</span>`;
}

export function LimitsPanel({ info, readOnly, setNotice, refresh }) {
  const l = info?.limits ?? {};
  const [edit, setEdit] = useState(null);
  if (!info) return null;
  const open = () =>
    setEdit({
      concurrency: l.concurrency ?? '',
      rate: l.rate ? `${l.rate.max}/${l.rate.duration}` : '',
      groupConcurrency: l.groupConcurrency ?? '',
      groupRate: l.groupRate ? `${l.groupRate.max}/${l.groupRate.duration}` : '',
    });
  const save = (e) => {
    e.preventDefault();
    const body = {
      concurrency: intOf(String(edit.concurrency)),
      rate: rateOf(edit.rate),
      groupConcurrency: intOf(String(edit.groupConcurrency)),
      groupRate: rateOf(edit.groupRate),
    };
    // the form closes once the limits are set; a refusal leaves it open with what was typed, to correct
    const set = async () => {
      const r = await api(`queues/${enc(info.name)}/limits`, body);
      setEdit(null);
      return r;
    };
    act(setNotice, 'set limits', set, refresh);
  };
  const field = (name, label, hint) =>
    html`<label
      >${label}
      <input
        data-testid=${'limit-' + name}
        size="8"
        placeholder=${hint}
        value=${edit[name]}
        onInput=${(e) => setEdit({ ...edit, [name]: e.target.value })}
    /></label>`;
  const parts = [
    l.concurrency !== undefined && `concurrency ${l.concurrency} (${info.active} taken)`,
    l.rate && `rate ${rateText(l.rate)} (${info.rateUsed ?? 0} in the window)`,
    l.groupConcurrency !== undefined && `group concurrency ${l.groupConcurrency}`,
    l.groupRate && `group rate ${rateText(l.groupRate)}`,
    ...Object.entries(l.groups ?? {}).map(
      ([g, o]) => `group ${g}: ${[o.concurrency && 'concurrency ' + o.concurrency, o.rate && rateText(o.rate)].filter(Boolean).join(', ')}`,
    ),
  ].filter(Boolean);
  const g = info.groups;
  return html`<div class="limits" data-testid="limits">
    <p>
      <strong>Limits</strong> ${parts.length > 0 ? parts.join(' · ') : html`<span class="muted">none</span>`}
      ${!readOnly && !edit && html`<button data-testid="edit-limits" onClick=${open}>Set limits</button>`}
    </p>
    ${
      edit &&
      html`<form onSubmit=${save}>
        ${field('concurrency', 'concurrency', 'n')} ${field('rate', 'rate', 'max/ms')}
        ${field('groupConcurrency', 'group concurrency', 'n')} ${field('groupRate', 'group rate', 'max/ms')}
        <button type="submit" data-testid="save-limits">Save</button> <button type="button" onClick=${() => setEdit(null)}>Cancel</button>
      </form>`
    }
    ${
      g &&
      html`<p data-testid="groups">
        <strong>Groups</strong> ${g.count} with waiting tasks (${g.waiting} tasks), ${g.held} held back
        ${g.top.length > 0 && html` · most waiting: ${g.top.map((t) => `${t.group} (${t.waiting} waiting, ${t.running} running)`).join(', ')}`}
      </p>`
    }
  </div>`;
}
