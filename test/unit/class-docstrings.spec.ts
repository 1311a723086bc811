// Every exported class in lib/ carries its own docstring. TypeDoc's notDocumented check does not see a
// class that has none when another comment stands in for it: ChronosModule's docstring sat above a
// constant declared between it and the class, so the class had none (no hover text in an editor) and
// TypeDoc showed lib/nest/index.ts's file comment in its place, while docs:check passed.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) return sources(p);
    return p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
  });
}

test('every exported class of lib/ has a docstring of its own', () => {
  const missing: string[] = [];
  for (const file of sources('lib')) {
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    for (const st of sf.statements) {
      if (!ts.isClassDeclaration(st) || !st.name) continue;
      if (!st.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
      if (ts.getJSDocCommentsAndTags(st).length === 0) missing.push(`${file} ${st.name.text}`);
    }
  }
  expect(missing).toEqual([]);
});
