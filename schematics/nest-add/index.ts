// `nest add @chronos/nest`: `ChronosModule.forRoot({ connection: process.env.REDIS_URL, namespace })`
// in the root module's imports and `app.enableShutdownHooks()` after `NestFactory.create` in
// main.ts. Each edit is made once: running it again changes nothing. What it cannot edit (a
// module without `@Module({ imports: [...] })`, a main.ts that does not call NestFactory) it
// says, with the line to add by hand.
import type { Rule, SchematicContext, Tree } from '@angular-devkit/schematics';
import { defaultNamespace, joinPath, NAME_RE, SchematicInputError } from '../utils/project.js';
import { addNamedImport, addShutdownHooks, addToModuleArray, hasNamedImport, moduleArrayElements } from '../utils/source-edits.js';

/** Options of `nest add @chronos/nest` (schema.json says the same for the CLI). */
export interface NestAddOptions {
  /** Source root of the app; the Nest CLI passes it from nest-cli.json. */
  sourceRoot?: string;
  /** Root module, relative to the source root. */
  module?: string;
  /** Entry file, relative to the source root. */
  main?: string;
  /** Chronos namespace; default the package.json name. */
  namespace?: string;
}

const PACKAGE = '@chronos/nest';
const REDIS_COMMENT = 'REDIS_URL: redis://[:password@]host:port[/db]; unset: redis://127.0.0.1:6379';
const HOOKS_COMMENT = 'on SIGTERM, Chronos hands its leadership over and drains running tasks';

/** The `nest-add` schematic's factory (the name `nest add` runs). */
export function nestAdd(options: NestAddOptions): Rule {
  return (tree: Tree, context: SchematicContext) => {
    const root = options.sourceRoot ?? 'src';
    const namespace = options.namespace ?? defaultNamespace(tree);
    if (!NAME_RE.test(namespace)) {
      throw new SchematicInputError(`--namespace ${JSON.stringify(namespace)}: expected 1-200 characters of [A-Za-z0-9_.:-]`);
    }
    const forRoot = `ChronosModule.forRoot({ connection: process.env.REDIS_URL, namespace: '${namespace}' })`;
    addModule(tree, context, joinPath(root, options.module ?? 'app.module.ts'), forRoot);
    addHooks(tree, context, joinPath(root, options.main ?? 'main.ts'));
    context.logger.info(`Chronos is set up. Add a scheduled job with: nest g -c ${PACKAGE} job <name>`);
    return tree;
  };
}

function addModule(tree: Tree, context: SchematicContext, path: string, forRoot: string): void {
  const by = `add ${forRoot} to its @Module imports, and import { ChronosModule } from '${PACKAGE}'`;
  const text = tree.read(path)?.toString('utf8');
  if (text === undefined) {
    context.logger.warn(`${path} does not exist (--module names the root module): ${by}.`);
    return;
  }
  if (moduleArrayElements(text, 'imports').some((e) => /^ChronosModule\.forRoot(Async)?\(/.test(e))) {
    context.logger.info(`${path} imports ChronosModule already: left as it is.`);
    return;
  }
  const edited = addToModuleArray(text, 'imports', forRoot, REDIS_COMMENT);
  if (edited === undefined) {
    context.logger.warn(`${path} has no @Module({ imports: [...] }) to add to: ${by}.`);
    return;
  }
  tree.overwrite(path, hasNamedImport(edited, 'ChronosModule', PACKAGE) ? edited : addNamedImport(edited, 'ChronosModule', PACKAGE));
}

function addHooks(tree: Tree, context: SchematicContext, path: string): void {
  const by = 'call app.enableShutdownHooks() after NestFactory.create(...), or a SIGTERM skips the hand-over and the drain';
  const text = tree.read(path)?.toString('utf8');
  if (text === undefined) {
    context.logger.warn(`${path} does not exist (--main names the entry file): ${by}.`);
    return;
  }
  const edit = addShutdownHooks(text, HOOKS_COMMENT);
  if (edit.kind === 'present') context.logger.info(`${path} enables shutdown hooks already: left as it is.`);
  else if (edit.kind === 'not-found') context.logger.warn(`${path} has no \`const app = await NestFactory.create(...)\`: ${by}.`);
  else tree.overwrite(path, edit.text);
}
