// One typed wrapper per Lua script (lib/core/redis/commands/): every script in the scripts folder has
// exactly one wrapper in the registry, and no code outside the commands folder calls a script itself.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SCRIPT_AREAS, SCRIPT_WRAPPERS } from '../../lib/core/redis/commands/index.js';
import { SCRIPT_NAMES } from '../../lib/core/redis/scripts.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const scriptsDir = join(root, 'lib/core/redis/scripts');
const commandsDir = 'lib/core/redis/commands';

const luaFiles = readdirSync(scriptsDir)
  .filter((f) => f.endsWith('.lua'))
  .map((f) => f.slice(0, -4))
  .sort();

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') ? [relative(root, path)] : [];
  });
}

/** `runScript(client, 'name', …)` (or its runScriptBuffer variant) / `pipeScript(p, 'name', …)` calls, type arguments and line breaks allowed. */
const CALL = /\b(runScript(?:Buffer)?|pipeScript)\s*(?:<[^;]*?>)?\s*\(\s*[\w.]+\s*,\s*'([\w-]+)'/g;

/** The script calls in every file of lib/ but scripts.ts (where runScript and pipeScript are defined). */
const calls = sources(join(root, 'lib'))
  .filter((file) => file !== 'lib/core/redis/scripts.ts')
  .flatMap((file) => {
    const text = readFileSync(join(root, file), 'utf8');
    const mentions = text.match(/\b(runScript(?:Buffer)?|pipeScript)\b/g) ?? [];
    const named = [...text.matchAll(CALL)].map((m) => ({ file, mode: m[1] === 'pipeScript' ? m[1] : 'runScript', script: m[2] }));
    return [{ file, mentions: mentions.length, named }];
  });

test('every .lua script has exactly one wrapper, in one area', () => {
  const areasOf = new Map<string, string[]>();
  for (const [area, wrappers] of Object.entries(SCRIPT_AREAS)) {
    for (const script of Object.keys(wrappers)) areasOf.set(script, [...(areasOf.get(script) ?? []), area]);
  }
  const problems: string[] = [];
  for (const script of luaFiles) {
    const areas = areasOf.get(script) ?? [];
    if (areas.length !== 1) problems.push(`${script}.lua: ${areas.length} wrappers (${areas.join(', ') || 'none'})`);
  }
  for (const script of areasOf.keys()) if (!luaFiles.includes(script)) problems.push(`a wrapper for ${script}, which has no .lua file`);
  expect(problems).toEqual([]);
  expect(Object.keys(SCRIPT_WRAPPERS).sort()).toEqual([...SCRIPT_NAMES].sort());
  for (const wrapper of Object.values(SCRIPT_WRAPPERS)) expect(typeof wrapper).toBe('function');
});

test('only the commands folder calls scripts: each script from its own area file, once (a pipelined variant aside)', () => {
  const outside = calls.filter((c) => !c.file.startsWith(`${commandsDir}/`) && c.mentions > 0).map((c) => c.file);
  expect(outside).toEqual([]);
  const problems: string[] = [];
  for (const [area, wrappers] of Object.entries(SCRIPT_AREAS)) {
    const file = `${commandsDir}/${area}.ts`;
    const named = calls.find((c) => c.file === file)?.named ?? [];
    for (const script of Object.keys(wrappers)) {
      const runs = named.filter((c) => c.script === script && c.mode === 'runScript').length;
      const pipes = named.filter((c) => c.script === script && c.mode === 'pipeScript').length;
      if (runs + pipes === 0 || runs > 1 || pipes > 1)
        problems.push(`${script}: ${runs} runScript and ${pipes} pipeScript calls in ${file}`);
    }
    for (const c of named) if (!(c.script in wrappers)) problems.push(`${file} calls ${c.script}, a script of another area`);
  }
  // every runScript/pipeScript in the folder names its script literally (so the checks above see it)
  for (const c of calls)
    if (c.file.startsWith(`${commandsDir}/`) && c.mentions > c.named.length + importsOf(c.file))
      problems.push(`${c.file}: a script call without a literal name`);
  expect(problems).toEqual([]);
});

/** How often a file names runScript/pipeScript outside calls: in its import line and its comments. */
function importsOf(file: string): number {
  const text = readFileSync(join(root, file), 'utf8');
  const imports = text.match(/^import [^;]*;/gms) ?? [];
  const comments = text.match(/\/\*\*?[\s\S]*?\*\/|\/\/.*$/gm) ?? [];
  return [...imports, ...comments].reduce((n, t) => n + (t.match(/\b(runScript(?:Buffer)?|pipeScript)\b/g)?.length ?? 0), 0);
}
