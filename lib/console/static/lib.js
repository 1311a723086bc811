// Shared bits of the console page: the vendored preact + htm, the API client, formatting.
import { h, render } from './vendor/preact.mjs';
import { useEffect, useState, useCallback, useRef } from './vendor/hooks.mjs';
import htm from './vendor/htm.mjs';

/**
 * Unicode's bidirectional controls (Unicode TR 9; CVE-2021-42574, "Trojan Source"): in a name, a
 * label, an error or a payload they reorder what the page shows ("evil\u202Etxt.exe" reads as
 * "evilexe.txt"). Every text the page renders shows each one as a visible `[U+202E]` instead.
 */
const BIDI_CONTROL = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;
const BIDI_CONTROLS = new RegExp(BIDI_CONTROL.source, 'g');
const visibleControl = (c) => `[U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}]`;

/** A rendered child (a string, or an array of children) with its bidirectional controls shown (see above). */
function visible(child) {
  if (typeof child === 'string') return BIDI_CONTROL.test(child) ? child.replace(BIDI_CONTROLS, visibleControl) : child;
  return Array.isArray(child) ? child.map(visible) : child;
}

/** preact's `h` with every text child and `title` shown with its bidirectional controls visible. */
function hVisible(type, props, ...children) {
  if (props && typeof props.title === 'string') props = { ...props, title: visible(props.title) };
  return h(type, props, ...children.map(visible));
}

export const html = htm.bind(hVisible);
export { render, useEffect, useState, useCallback, useRef };

/** GET `api/<path>` (no body) or POST it with a JSON body; throws the API's error message. */
export async function api(path, body) {
  const init =
    body === undefined
      ? { headers: { accept: 'application/json' } }
      : { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) };
  const res = await fetch('api/' + path, init);
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(data.error || `HTTP ${res.status}`);
  return data;
}

export const enc = encodeURIComponent;

/**
 * Reads `api/<path>` from an effect, again whenever `path` or one of `deps` (a poll's tick, a
 * version bumped after an act) changes, and hands the answer to `onData` (a failure to `onError`)
 * only when it is still wanted: `path` is still the one asked for (not another tab, filter, queue,
 * page or task: the operator moved on while it was on its way), and no later request for it has been
 * answered already. A slow answer thus never replaces the listing in view (trial 31: a late pending
 * listing was shown under the scheduled tab, with its acts). One read of a path at a time: a change
 * of `deps` while it is on its way asks for one more read once it ends, so that reads slower than
 * the polling (25 tasks of 1 MB on a slow link) do not pile up, each slowing the next, and a read
 * asked for after an act still starts after it. A `path` of null reads nothing.
 */
export function useApi(path, deps, onData, onError) {
  const w = useRef({ path, asked: 0, shown: 0, busy: null, again: false }).current;
  w.path = path;
  w.onData = onData;
  w.onError = onError;
  useEffect(() => {
    if (path === null) return;
    if (w.busy === path) return void (w.again = true);
    const read = () => {
      const n = ++w.asked;
      w.busy = path;
      w.again = false;
      const fresh = () => w.path === path && n > w.shown && ((w.shown = n), true);
      api(path)
        .then(
          (data) => fresh() && w.onData(data),
          (err) => fresh() && w.onError?.(err),
        )
        .finally(() => {
          if (w.busy !== path) return;
          w.busy = null;
          if (w.again && w.path === path) read();
        });
    };
    read();
  }, [path, ...deps]);
}

/** `2h 3m`, `4.2 s`, `120 ms` from ms. */
export function duration(ms) {
  if (ms === undefined || ms === null) return '-';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${Math.floor(s % 60)}s`;
  const hh = Math.floor(m / 60);
  if (hh < 48) return `${hh}h ${m % 60}m`;
  return `${Math.floor(hh / 24)}d ${hh % 24}h`;
}

/**
 * An epoch ms in the browser's time zone, the zone named (`12/8/2026, 1:03:00 AM GMT+1`, `… UTC`):
 * the page is read from anywhere, and a time that does not say its zone is read in the reader's.
 */
export function localTime(ms) {
  return new Date(ms).toLocaleString(undefined, { timeZoneName: 'short' });
}

/** Local time of an epoch ms ({@link localTime}: its zone named), and how long ago / until. */
export function when(ms) {
  if (!ms) return '-';
  const delta = ms - Date.now();
  const rel = Math.abs(delta) < 1000 ? 'now' : delta < 0 ? `${duration(-delta)} ago` : `in ${duration(delta)}`;
  return `${localTime(ms)} (${rel})`;
}

/** A schedule's last fire (its trigger instant): one enqueued ahead of its instant is "due in 2s, enqueued", never "in 2s" (as the CLI's firedWhen). */
export function fired(ms) {
  if (!ms || ms - Date.now() < 1000) return when(ms);
  return when(ms).replace(/\(in ([^)]*)\)$/, '(due in $1, enqueued)');
}

export function bytes(n) {
  if (!n) return '0 B';
  const u = ['B', 'KB', 'MB', 'GB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i ? 1 : 0)} ${u[i]}`;
}

/**
 * A segment of the hash, %-decoded; as written when an escape in it is malformed (`%ZZ`, a link cut
 * short): the page then shows what the API says of that name, where decodeURIComponent's URIError
 * left it blank (trial 31).
 */
function segment(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The current hash route: `['queues', 'default', 'dead']` and its query. */
export function route() {
  const [path, query = ''] = location.hash.replace(/^#\/?/, '').split('?');
  return { parts: path.split('/').filter(Boolean).map(segment), query: new URLSearchParams(query) };
}

export function go(hash) {
  location.hash = hash;
}

/** A message line (error or notice); text only. */
export function Notice({ notice }) {
  if (!notice) return null;
  return html`<p class=${notice.error ? 'notice error' : 'notice'} data-testid="notice">${notice.text}</p>`;
}

/**
 * What a task act left undone (`ActResult.skipped`: a selected task deleted, retried or run by someone
 * else meanwhile), said after its count: `; 2 skipped (b: Task b not found in queue "mail"; …)`.
 */
function skippedText(skipped) {
  if (!Array.isArray(skipped) || skipped.length === 0) return '';
  const [first] = skipped;
  return `; ${skipped.length} skipped (${first.id}: ${first.reason}${skipped.length > 1 ? '; …' : ''})`;
}

/**
 * Runs an act, then reports it in `setNotice` and calls `after`: done with its count, and the tasks
 * it skipped and why (an error when it did none of them: trial 31, "retry 2 selected: done (0
 * tasks)" hid that both were gone); nothing changed; or the error.
 */
export async function act(setNotice, label, fn, after) {
  try {
    const r = await fn();
    const count = r && typeof r.count === 'number' ? ` (${r.count} task${r.count === 1 ? '' : 's'})` : '';
    const skipped = skippedText(r?.skipped);
    // a pause of a paused queue or schedule (a resume of a running one) says it did nothing
    if (r && r.changed === false) setNotice({ text: `${label}: nothing changed (it was so already)` });
    else setNotice({ text: `${label}: done${count}${skipped}`, error: skipped !== '' && r.count === 0 });
  } catch (err) {
    setNotice({ text: `${label}: ${err.message}`, error: true });
  }
  if (after) after();
}
