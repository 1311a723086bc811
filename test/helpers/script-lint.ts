// The lint of the Lua scripts' headers (test/unit/scripts-and-keys.spec.ts): numbering, declared vs
// read KEYS/ARGV, and the protocol.ts names a header or a Lua constant table refers to.
import * as protocol from '../../lib/core/redis/protocol.js';

type Kind = 'KEYS' | 'ARGV';

/** One `KEYS[…]`/`ARGV[…]` line of a header: a slot, an optional slot (`4?`, `4|5?`) or the variadic tail (`3..`). */
interface Slot {
  kind: Kind;
  spec: string;
  /** The positions it may take (one, or the alternatives of `4|5?`); the first one for a tail. */
  at: number[];
  optional: boolean;
  tail: boolean;
}

const SLOT_LINE = /^\s*(KEYS|ARGV)\[([^\]]+)\]/gm;

function parseSlot(kind: Kind, spec: string): Slot | undefined {
  let m = /^(\d+)$/.exec(spec);
  if (m) return { kind, spec, at: [Number(m[1])], optional: false, tail: false };
  m = /^(\d+(?:\|\d+)*)\?$/.exec(spec);
  if (m) return { kind, spec, at: m[1].split('|').map(Number), optional: true, tail: false };
  m = /^(\d+)\s*\.\./.exec(spec);
  if (m) return { kind, spec, at: [Number(m[1])], optional: false, tail: true };
  return undefined;
}

/** Lua source without comments (so a comment naming KEYS[9] is not a read). */
function stripComments(lua: string): string {
  return lua.replace(/--\[\[[\s\S]*?\]\]/g, '').replace(/--.*$/gm, '');
}

/** The `N name` pairs of a header text after a `protocol.ts NAME` reference, checked against that table. */
function checkCodes(table: string, codes: Record<string, number>, text: string, problems: string[]): void {
  const seen = new Set<string>();
  for (const m of text.matchAll(/(?:^|[|{:])\s*(-?\d+) ([A-Za-z]+)/g)) {
    const [, code, name] = m;
    if (codes[name] !== Number(code)) problems.push(`header: "${code} ${name}" but protocol.ts ${table}.${name} is ${codes[name]}`);
    seen.add(name);
  }
  for (const name of Object.keys(codes)) if (!seen.has(name)) problems.push(`header: ${table}.${name} (${codes[name]}) is not listed`);
}

/** Checks the `protocol.ts NAME` references of a header. */
function checkReferences(header: string, problems: string[]): void {
  const tables = protocol as unknown as Record<string, unknown>;
  for (const m of header.matchAll(/protocol\.ts ([A-Z_]+)/g)) {
    const name = m[1];
    const value = tables[name];
    if (value === undefined) {
      problems.push(`header: protocol.ts has no ${name}`);
      continue;
    }
    if (!name.endsWith('_RESULT')) continue;
    // the text of the paragraph that names the table: up to the next KEYS/ARGV/Returns line
    const rest = header.slice(m.index + m[0].length);
    const end = rest.search(/\n\s*(KEYS|ARGV|Returns)\b/);
    checkCodes(name, value as Record<string, number>, end < 0 ? rest : rest.slice(0, end), problems);
  }
}

/**
 * Lua constant tables mirror protocol.ts: `local NAME = { key = value, … } -- protocol.ts NAME` on one
 * line, every pair as protocol.ts has it (a table may hold a subset).
 */
export function lintConstantTables(source: string): string[] {
  const problems: string[] = [];
  const tables = protocol as unknown as Record<string, Record<string, unknown>>;
  for (const m of source.matchAll(/^local ([A-Z_]+) = \{(.*)\}(.*)$/gm)) {
    const [, name, body, after] = m;
    const ref = /^\s*-- protocol\.ts ([A-Z_]+)\s*$/.exec(after)?.[1];
    if (ref !== name) {
      problems.push(`local ${name}: expected the comment "-- protocol.ts ${name}" after the table`);
      continue;
    }
    const table = tables[name];
    if (typeof table !== 'object') {
      problems.push(`local ${name}: protocol.ts has no ${name}`);
      continue;
    }
    for (const p of body.matchAll(/([A-Za-z]+) = ('([^']*)'|-?\d+)/g)) {
      const value = p[3] ?? Number(p[2]);
      const expected = JSON.stringify(table[p[1]]);
      if (table[p[1]] !== value) problems.push(`local ${name}: ${p[1]} = ${p[2]} but protocol.ts ${name}.${p[1]} is ${expected}`);
    }
  }
  return problems;
}

/**
 * The problems of one script (empty when it is fine):
 * - it opens with `--[[ <name>` and its header has KEYS[1] (when it uses keys) and Returns;
 * - the header's KEYS[i] and ARGV[i] lines are numbered 1..n in order, without gaps or repeats
 *   (optional slots `4?`, alternatives `4|5?`, and a last variadic tail `n..` allowed);
 * - every KEYS[i]/ARGV[i] the body reads is declared, and every declared slot (not optional) is read;
 *   a computed index (`KEYS[k]`, `#ARGV`) needs an optional slot or a tail;
 * - `protocol.ts NAME` references exist, and result-code lists match those tables;
 * - keys are never taken from ARGV (a PUBLISH channel is not a key).
 */
export function lintScript(name: string, source: string): string[] {
  const problems: string[] = [];
  const header = /^--\[\[ ([a-z-]+)\n([\s\S]*?)\]\]/.exec(source);
  if (!header) return [`no header: the script must open with "--[[ ${name}"`];
  if (header[1] !== name) problems.push(`header names "${header[1]}", expected "${name}"`);
  const text = header[2];
  const body = stripComments(source.slice(header[0].length));
  if (!/^\s*Returns\b/m.test(text)) problems.push('header: no Returns line');
  const slots: Slot[] = [];
  for (const m of text.matchAll(SLOT_LINE)) {
    const slot = parseSlot(m[1] as Kind, m[2].trim());
    if (slot) slots.push(slot);
    else problems.push(`header: cannot read the index of ${m[1]}[${m[2]}]`);
  }
  for (const kind of ['KEYS', 'ARGV'] as const) {
    const mine = slots.filter((s) => s.kind === kind);
    let expected = 1;
    let tail: Slot | undefined;
    for (const s of mine) {
      const last = s.at[s.at.length - 1];
      if (tail) problems.push(`header: ${kind}[${s.spec}] comes after the variadic ${kind}[${tail.spec}]`);
      else if (last !== expected) problems.push(`header: ${kind}[${s.spec}] is out of order: expected ${kind}[${expected}] next`);
      else if (s.at.some((a, i) => i > 0 && a <= s.at[i - 1])) problems.push(`header: ${kind}[${s.spec}]: alternatives must ascend`);
      if (s.tail) tail = s;
      expected = Math.max(expected, last + 1); // one misplaced slot is one problem, not one per slot after it
    }
    const declared = new Set(mine.filter((s) => !s.tail).flatMap((s) => s.at));
    const variable = tail !== undefined || mine.some((s) => s.optional);
    const read = new Set<number>();
    for (const m of body.matchAll(new RegExp(`\\b${kind}\\[([^\\]]+)\\]`, 'g'))) {
      if (/^\d+$/.test(m[1])) {
        const i = Number(m[1]);
        read.add(i);
        if (!declared.has(i) && !(tail && i >= tail.at[0])) problems.push(`body reads ${kind}[${i}], which the header does not declare`);
      } else if (!variable) problems.push(`body reads ${kind}[${m[1]}]: a computed index needs an optional or variadic ${kind} slot`);
    }
    if (new RegExp(`#${kind}\\b`).test(body) && !variable) {
      problems.push(`body reads #${kind}: that needs an optional or variadic ${kind} slot`);
    }
    for (const s of mine) {
      if (!s.optional && !s.tail && !read.has(s.at[0])) problems.push(`header declares ${kind}[${s.spec}], which the body never reads`);
    }
  }
  if (/\bKEYS\[/.test(body) && !slots.some((s) => s.kind === 'KEYS')) problems.push('header: no KEYS lines');
  checkReferences(text, problems);
  if (/redis\.call\('(?!PUBLISH)[A-Z]+', *ARGV/.test(body)) problems.push('a key is taken from ARGV');
  return problems;
}

/** The problems of an include snippet: it opens with `-- @snippet <name>:` and never reads KEYS or ARGV (it takes parameters). */
export function lintSnippet(name: string, source: string): string[] {
  const problems: string[] = [];
  if (!source.startsWith(`-- @snippet ${name}:`)) problems.push(`snippet ${name}: must open with "-- @snippet ${name}: <what it defines>"`);
  if (/\b(KEYS|ARGV)\b/.test(stripComments(source))) problems.push(`snippet ${name}: reads KEYS or ARGV (pass them as parameters)`);
  return problems;
}
