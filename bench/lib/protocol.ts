/** Messages from the parent (run.js) to a bench child. */
export type ParentMessage = { type: 'go' } | { type: 'mark' } | { type: 'end' } | { type: 'report' } | { type: 'exit' };

/** Messages from a bench child to the parent. Every child sends `ready` once it may be measured. */
export type ChildMessage = { type: string; [key: string]: unknown };
