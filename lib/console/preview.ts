// The task listing's payload previews: the page shows 120 characters of each payload, so the listing
// need not carry whole payloads (25 tasks of up to 1 MB each, read again at every poll: trial 31).
import type { TaskInfo } from '../core/admin/types.js';
import { ApiError, intParam } from './api.js';

/** Most characters a preview may ask for (`preview=`). */
export const MAX_PREVIEW_CHARS = 1000;

/** A listed task whose payload is cut to a preview (GET `queues/<q>/tasks?…&preview=<chars>`). */
export type TaskPreview = Omit<TaskInfo, 'payload'> & {
  /** The first characters of the (redacted) payload's JSON, or of a payload that is a string, `…` after a cut. */
  payloadPreview: string;
  /** The size of that whole JSON (or string), in UTF-8 bytes. */
  payloadBytes: number;
};

/**
 * The `preview` query parameter: how many characters of each payload to send (1-1000), undefined
 * when absent (whole payloads). @throws ApiError 400 naming the value when it is not an integer in range
 */
export function previewChars(q: URLSearchParams): number | undefined {
  if (!q.has('preview')) return undefined;
  const n = intParam(q, 'preview', 0);
  if (n < 1 || n > MAX_PREVIEW_CHARS) throw new ApiError(400, `preview: expected 1-${MAX_PREVIEW_CHARS} characters, got ${n}`);
  return n;
}

/**
 * `task` (its payload redacted already: the preview is cut from what may leave the server) with the
 * payload replaced by its first `chars` characters ({@link TaskPreview}); a cut never splits a
 * surrogate pair.
 */
export function withPreview(task: TaskInfo, chars: number): TaskPreview {
  const { payload, ...rest } = task;
  const text = typeof payload === 'string' ? payload : (JSON.stringify(payload) ?? '');
  let cut = text;
  if (text.length > chars) {
    const high = text.charCodeAt(chars - 1);
    cut = text.slice(0, high >= 0xd800 && high <= 0xdbff ? chars - 1 : chars) + '…';
  }
  return { ...rest, payloadPreview: cut, payloadBytes: Buffer.byteLength(text) };
}
