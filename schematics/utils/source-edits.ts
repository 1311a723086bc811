// Edits of a Nest app's TypeScript sources that the schematics make: a named import, an element
// of a `@Module({ ... })` array (imports, providers), a statement after `NestFactory.create`.
// Each edit parses the file with the app's own `typescript` (every Nest project has it) and
// splices text at the positions the syntax tree gives, so the rest of the file (its comments,
// its formatting) stays as the user wrote it. Each returns the new text, or `undefined` when the
// file does not have the shape it needs (the caller says what to do by hand).
import ts from 'typescript';

function parse(text: string, fileName = 'file.ts'): ts.SourceFile {
  return ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
}

/** The whitespace that starts the line on which `pos` is. */
function indentAt(text: string, pos: number): string {
  const lineStart = text.lastIndexOf('\n', pos - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))![0];
}

function lineOf(sf: ts.SourceFile, pos: number): number {
  return sf.getLineAndCharacterOfPosition(pos).line;
}

/** One indentation step of the file: the first indented line's indentation, else two spaces. */
function indentUnit(text: string): string {
  return /\n([ \t]+)\S/.exec(text)?.[1] ?? '  ';
}

/** True when the file has an import of `name` from `from`. */
export function hasNamedImport(text: string, name: string, from: string): boolean {
  return parse(text).statements.some(
    (s) =>
      ts.isImportDeclaration(s) &&
      ts.isStringLiteral(s.moduleSpecifier) &&
      s.moduleSpecifier.text === from &&
      s.importClause?.namedBindings !== undefined &&
      ts.isNamedImports(s.importClause.namedBindings) &&
      s.importClause.namedBindings.elements.some((e) => e.name.text === name),
  );
}

/**
 * Adds `import { name } from 'from';`: into an existing value import from `from` when there is
 * one, else as a new line after the last import of its kind (a package after the packages, a
 * relative path after the relative ones; else after the last import, or at the top).
 */
export function addNamedImport(text: string, name: string, from: string): string {
  if (hasNamedImport(text, name, from)) return text;
  const sf = parse(text);
  const imports = sf.statements.filter(ts.isImportDeclaration);
  const same = imports.find(
    (s) =>
      ts.isStringLiteral(s.moduleSpecifier) &&
      s.moduleSpecifier.text === from &&
      !s.importClause?.isTypeOnly &&
      s.importClause?.namedBindings !== undefined &&
      ts.isNamedImports(s.importClause.namedBindings),
  );
  if (same) {
    const named = same.importClause!.namedBindings as ts.NamedImports;
    const last = named.elements[named.elements.length - 1];
    return last ? splice(text, last.end, `, ${name}`) : splice(text, named.getStart(sf) + 1, ` ${name} `);
  }
  const line = `import { ${name} } from '${from}';`;
  const relative = (s: ts.ImportDeclaration) => ts.isStringLiteral(s.moduleSpecifier) && s.moduleSpecifier.text.startsWith('.');
  const sameKind = imports.filter((s) => relative(s) === from.startsWith('.'));
  const lastImport = sameKind[sameKind.length - 1] ?? imports[imports.length - 1];
  return lastImport ? splice(text, lastImport.end, `\n${line}`) : `${line}\n${text}`;
}

/** The object literal of the first `@Module({ ... })` decorator of a class in the file. */
function moduleMetadata(sf: ts.SourceFile): ts.ObjectLiteralExpression | undefined {
  for (const s of sf.statements) {
    if (!ts.isClassDeclaration(s)) continue;
    for (const d of ts.getDecorators(s) ?? []) {
      const call = d.expression;
      if (!ts.isCallExpression(call) || !ts.isIdentifier(call.expression) || call.expression.text !== 'Module') continue;
      const arg = call.arguments[0];
      if (arg && ts.isObjectLiteralExpression(arg)) return arg;
    }
  }
  return undefined;
}

function propertyNamed(obj: ts.ObjectLiteralExpression, name: string): ts.PropertyAssignment | undefined {
  return obj.properties.find(
    (p): p is ts.PropertyAssignment =>
      ts.isPropertyAssignment(p) && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) && p.name.text === name,
  );
}

/** The source text of the elements of the `@Module` array `property` (empty when there is none). */
export function moduleArrayElements(text: string, property: string): string[] {
  const sf = parse(text);
  const meta = moduleMetadata(sf);
  const prop = meta && propertyNamed(meta, property);
  if (!prop || !ts.isArrayLiteralExpression(prop.initializer)) return [];
  return prop.initializer.elements.map((e) => e.getText(sf));
}

/**
 * Appends `element` (source text, one line) to the `property` array of the file's first
 * `@Module({ ... })`, creating the property when it is absent. An empty array becomes a
 * multi-line one; a multi-line array gets the element on its own line; a one-line array gets
 * `, element`. `undefined` when the file has no `@Module({ ... })` or the property is not an
 * array literal (e.g. `imports: sharedImports`).
 */
export function addToModuleArray(text: string, property: string, element: string, comment?: string): string | undefined {
  const sf = parse(text);
  const meta = moduleMetadata(sf);
  if (!meta) return undefined;
  const unit = indentUnit(text);
  const prop = propertyNamed(meta, property);
  const commentLine = (indent: string) => (comment ? `${indent}// ${comment}\n` : '');
  if (!prop) {
    const first = meta.properties[0];
    if (!first) {
      const indent = indentAt(text, meta.getStart(sf));
      const body = `{\n${indent}${unit}${property}: [\n${commentLine(indent + unit + unit)}${indent}${unit}${unit}${element},\n${indent}${unit}],\n${indent}}`;
      return text.slice(0, meta.getStart(sf)) + body + text.slice(meta.end);
    }
    const indent = indentAt(text, first.getStart(sf));
    if (lineOf(sf, first.getStart(sf)) === lineOf(sf, meta.getStart(sf))) {
      return splice(text, first.getStart(sf), `${property}: [${element}], `);
    }
    const inserted = `${property}: [\n${commentLine(indent + unit)}${indent}${unit}${element},\n${indent}],\n${indent}`;
    return splice(text, first.getStart(sf), inserted);
  }
  const arr = prop.initializer;
  if (!ts.isArrayLiteralExpression(arr)) return undefined;
  const propIndent = indentAt(text, prop.getStart(sf));
  const last = arr.elements[arr.elements.length - 1];
  if (!last) {
    const inner = propIndent + unit;
    const body = `[\n${commentLine(inner)}${inner}${element},\n${propIndent}]`;
    return text.slice(0, arr.getStart(sf)) + body + text.slice(arr.end);
  }
  const multiLine = lineOf(sf, last.getStart(sf)) !== lineOf(sf, arr.getStart(sf));
  if (!multiLine) return splice(text, last.end, `, ${element}`);
  const indent = indentAt(text, last.getStart(sf));
  if (arr.elements.hasTrailingComma) {
    const comma = text.indexOf(',', last.end);
    return splice(text, comma + 1, `\n${commentLine(indent)}${indent}${element},`);
  }
  return splice(text, last.end, `,\n${commentLine(indent)}${indent}${element}`);
}

/** The result of {@link addShutdownHooks}. */
export type ShutdownHooksEdit = { kind: 'added'; text: string; app: string } | { kind: 'present' } | { kind: 'not-found' };

const FACTORY_METHODS = new Set(['create', 'createMicroservice', 'createApplicationContext']);

/** `x = await NestFactory.create(...)` (or createMicroservice / createApplicationContext): the name x. */
function nestFactoryVariable(decl: ts.VariableDeclaration): string | undefined {
  let init = decl.initializer;
  if (!init || !ts.isIdentifier(decl.name)) return undefined;
  if (ts.isAwaitExpression(init)) init = init.expression;
  if (!ts.isCallExpression(init) || !ts.isPropertyAccessExpression(init.expression)) return undefined;
  const callee = init.expression;
  const isFactory = ts.isIdentifier(callee.expression) && callee.expression.text === 'NestFactory' && FACTORY_METHODS.has(callee.name.text);
  return isFactory ? decl.name.text : undefined;
}

/**
 * Adds `app.enableShutdownHooks();` (with `comment`) on the line after the statement that creates
 * the app with `NestFactory.create(...)`, whatever the variable is called. `present` when the file
 * already calls `enableShutdownHooks`; `not-found` when no such statement is there.
 */
export function addShutdownHooks(text: string, comment: string): ShutdownHooksEdit {
  const sf = parse(text);
  let found: { statement: ts.VariableStatement; app: string } | undefined;
  let present = false;
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node) && node.name.text === 'enableShutdownHooks') present = true;
    if (!found && ts.isVariableStatement(node)) {
      for (const decl of node.declarationList.declarations) {
        const app = nestFactoryVariable(decl);
        if (app) found = { statement: node, app };
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  if (present) return { kind: 'present' };
  if (!found) return { kind: 'not-found' };
  const indent = indentAt(text, found.statement.getStart(sf));
  const line = `\n${indent}${found.app}.enableShutdownHooks(); // ${comment}`;
  return { kind: 'added', text: splice(text, found.statement.end, line), app: found.app };
}

function splice(text: string, at: number, insert: string): string {
  return text.slice(0, at) + insert + text.slice(at);
}
