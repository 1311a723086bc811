// `nest g -c @chronos/nest job <name>` (asks for the schedule in a terminal) and
// `npx schematics @chronos/nest:job <name> --cron "<expr>" [--tz <zone>]` / `--every <duration>`:
// a provider with a `@Cron`/`@Interval` method, its unit test with @chronos/nest/testing, and the
// provider in the nearest module's `providers`. The options are those of @nestjs/schematics'
// `provider` (name, path, flat, spec, specFileSuffix, skipImport, sourceRoot) plus the schedule.
import type { Rule, SchematicContext, Tree } from '@angular-devkit/schematics';
import {
  findModule,
  importSuffix,
  joinPath,
  NAME_RE,
  relativeImport,
  SchematicInputError,
  toClassName,
  toKebab,
} from '../utils/project.js';
import { addNamedImport, addToModuleArray, moduleArrayElements } from '../utils/source-edits.js';
import { jobFile, specFile } from './files.js';
import { firstTriggers, resolveSchedule, type ScheduleInput } from './schedule.js';

/** Options of the `job` schematic (schema.json says the same for the CLI). */
export interface JobOptions extends ScheduleInput {
  /** The job's name, optionally with a path: `nightly-report`, `reports/nightly-report`. */
  name: string;
  /** Directory under the source root; default the source root itself. */
  path?: string;
  /** Source root of the app (the Nest CLI passes `sourceRoot` from nest-cli.json). */
  sourceRoot?: string;
  /** Write the files into `path` itself instead of a `<name>/` folder in it. */
  flat?: boolean;
  /** Write the unit test. */
  spec?: boolean;
  /** Suffix of the test file. */
  specFileSuffix?: string;
  /** Do not add the provider to a module. */
  skipImport?: boolean;
  /** Only `ts`: the Nest CLI passes the project's language. */
  language?: string;
}

/** Start of the generated test's window: a fixed instant, so the file is the same whenever it is generated. */
const SPEC_FROM = Date.parse('2026-01-01T00:00:00.000Z');

/** The `job` schematic's factory. */
export function job(options: JobOptions): Rule {
  return (tree: Tree, context: SchematicContext) => {
    if (options.language !== undefined && options.language !== 'ts') {
      throw new SchematicInputError(`The job schematic writes TypeScript; this project's language is ${JSON.stringify(options.language)}`);
    }
    if (typeof options.name !== 'string' || options.name.trim() === '') throw new SchematicInputError('Give the job a name: job <name>');
    const segments = options.name.split('/').map(toKebab);
    const fileName = segments.pop()!;
    const scheduleName = fileName;
    if (!NAME_RE.test(scheduleName)) {
      throw new SchematicInputError(
        `The job name ${JSON.stringify(scheduleName)} is not a schedule name: it must be 1-200 characters of [A-Za-z0-9_.:-]`,
      );
    }
    const className = `${toClassName(fileName)}Job`;
    const schedule = resolveSchedule(options, scheduleName);
    const dir = joinPath(options.sourceRoot ?? 'src', options.path, ...segments, options.flat ? undefined : fileName);
    const suffix = importSuffix(tree);
    const triggers = firstTriggers(schedule, SPEC_FROM, 2) as [number, number];
    const files = { className, fileName, scheduleName, schedule, importSuffix: suffix, triggers, fromMs: SPEC_FROM };

    const jobPath = joinPath(dir, `${fileName}.job.ts`);
    if (tree.exists(jobPath)) throw new SchematicInputError(`${jobPath} exists already: pick another name, or remove it first`);
    tree.create(jobPath, jobFile(files));
    if (options.spec !== false) tree.create(joinPath(dir, `${fileName}.job.${options.specFileSuffix || 'spec'}.ts`), specFile(files));
    if (!options.skipImport) declareInModule(tree, context, dir, jobPath, className, suffix);
    return tree;
  };
}

/** Adds the provider to the nearest module's `providers`, with its import (as `nest g provider` does). */
function declareInModule(tree: Tree, context: SchematicContext, dir: string, jobPath: string, className: string, suffix: string): void {
  const modulePath = findModule(tree, dir);
  if (!modulePath) {
    context.logger.warn(`No *.module.ts found in ${dir} or above it: add ${className} to a module's providers yourself.`);
    return;
  }
  const text = tree.read(modulePath)!.toString('utf8');
  if (moduleArrayElements(text, 'providers').includes(className)) return;
  const withProvider = addToModuleArray(text, 'providers', className);
  if (withProvider === undefined) {
    context.logger.warn(`${modulePath} has no @Module({ providers: [...] }) to add to: add ${className} to its providers yourself.`);
    return;
  }
  const from = relativeImport(modulePath, jobPath.replace(/\.ts$/, '')) + suffix;
  tree.overwrite(modulePath, addNamedImport(withProvider, className, from));
}
