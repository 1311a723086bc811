// What the schematics read about the app they run in (its package.json, where its sources are)
// and the names they derive, with the same rules as @nestjs/schematics where it has one.
import type { Tree } from '@angular-devkit/schematics';

/**
 * A schematic's input the app cannot use. The schematics CLI (which `nest add` and `nest g` run)
 * prints its message as `Error: <message>` and writes nothing.
 */
export class SchematicInputError extends Error {
  override readonly name = 'SchematicInputError';
}

function packageJson(tree: Tree): { name?: unknown; type?: unknown } | undefined {
  const buf = tree.read('package.json');
  if (!buf) return undefined;
  try {
    return JSON.parse(buf.toString('utf8')) as { name?: unknown; type?: unknown };
  } catch {
    return undefined;
  }
}

/**
 * True when the app is an ES module project (`"type": "module"`, what `nest new` makes since
 * NestJS 12): its relative imports then end in `.js`. @nestjs/schematics decides the same way.
 */
export function isEsmProject(tree: Tree): boolean {
  return packageJson(tree)?.type === 'module';
}

/** `'.js'` for an ES module project, `''` for CommonJS: the suffix of relative import paths. */
export function importSuffix(tree: Tree): string {
  return isEsmProject(tree) ? '.js' : '';
}

/** Chronos's rule for namespaces and schedule names: 1-200 characters of `[A-Za-z0-9_.:-]`. */
export const NAME_RE = /^[A-Za-z0-9_.:-]{1,200}$/;

/**
 * A namespace for the app: its package.json name with a scope's `@` dropped and `/` and any other
 * character Chronos refuses turned into `-` (`@acme/billing-api` → `acme-billing-api`); `chronos`
 * when there is no usable name.
 */
export function defaultNamespace(tree: Tree): string {
  const name = packageJson(tree)?.name;
  if (typeof name !== 'string') return 'chronos';
  const ns = name
    .replace(/^@/, '')
    .replace(/[^A-Za-z0-9_.:-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 200);
  return ns === '' ? 'chronos' : ns;
}

/** @nestjs/schematics' file-name rule: camelCase to kebab-case, spaces to dashes, lower case. */
export function toKebab(name: string): string {
  return name
    .trim()
    .replace(/([a-z\d])([A-Z])/g, '$1-$2')
    .toLowerCase()
    .replace(/\s+/g, '-');
}

/** `nightly-report` → `NightlyReport` (the class name stem); throws when it is no identifier. */
export function toClassName(kebab: string): string {
  const stem = kebab
    .split(/[-_.]+/)
    .filter((part) => part !== '')
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');
  if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(stem)) {
    throw new SchematicInputError(
      `The name ${JSON.stringify(kebab)} does not make a class name (${JSON.stringify(stem)}): use letters, digits and dashes, starting with a letter`,
    );
  }
  return stem;
}

/** POSIX join of path segments, without leading, trailing or doubled slashes. */
export function joinPath(...parts: (string | undefined)[]): string {
  return parts
    .filter((p): p is string => p !== undefined && p !== '')
    .join('/')
    .split('/')
    .filter((p) => p !== '' && p !== '.')
    .join('/');
}

/** The relative import path from the file `from` to the file `to` (both from the app root, no extension on `to`). */
export function relativeImport(from: string, to: string): string {
  const fromDir = from.split('/').slice(0, -1);
  const target = to.split('/');
  let common = 0;
  while (common < fromDir.length && common < target.length - 1 && fromDir[common] === target[common]) common++;
  const up = fromDir.length - common;
  const rest = target.slice(common).join('/');
  return up === 0 ? `./${rest}` : `${'../'.repeat(up)}${rest}`;
}

/** The nearest `*.module.ts` in `dir` or above it (as @nestjs/schematics' ModuleFinder looks), or undefined. */
export function findModule(tree: Tree, dir: string): string | undefined {
  let current: string | undefined = dir;
  while (current !== undefined) {
    const entry = tree.getDir(current === '' ? '/' : current);
    const file = entry.subfiles.find((f) => /\.module\.ts$/.test(f));
    if (file) return joinPath(current, file);
    current = current === '' ? undefined : current.split('/').slice(0, -1).join('/');
  }
  return undefined;
}
