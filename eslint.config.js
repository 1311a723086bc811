// ESLint (flat config): typescript-eslint's recommended rules plus the house rules that a reviewer
// would otherwise have to remember. Formatting is Prettier's job (.prettierrc.json), not ESLint's.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * `local/no-fixed-sleep`: a test spec that sleeps a fixed time (`await new Promise((r) =>
 * setTimeout(r, ms))`, `await sleep(ms)` / `delay(ms)`, `setTimeout` from `timers/promises`)
 * instead of awaiting the event it means is slow and flaky. Where the time itself is the point (an
 * outage that must last past a TTL, a time-based cache, a window in which nothing may happen), the
 * line says why in a comment on the same line (or an `eslint-disable-next-line local/no-fixed-sleep
 * -- <why>` above it).
 */
const noFixedSleep = {
  meta: {
    type: 'problem',
    schema: [],
    messages: {
      sleep:
        'A fixed sleep in a test: await the event (waitFor, a deferred, an emitted event) instead, or say on this line why the time itself is the point.',
    },
  },
  create(context) {
    const source = context.sourceCode;
    const commentedLines = new Set(
      source
        .getAllComments()
        .filter((c) => !/^\s*eslint/.test(c.value) && c.value.trim().length > 0)
        .map((c) => c.loc.start.line),
    );
    const timerImports = new Set();
    const insidePromiseExecutor = (node) =>
      source.getAncestors(node).some((a) => a.type === 'NewExpression' && a.callee.type === 'Identifier' && a.callee.name === 'Promise');
    const check = (node) => {
      if (!commentedLines.has(node.loc.start.line) && !commentedLines.has(node.loc.end.line)) context.report({ node, messageId: 'sleep' });
    };
    return {
      ImportDeclaration(node) {
        if (/^(node:)?timers\/promises$/.test(String(node.source.value))) {
          for (const s of node.specifiers)
            if (s.type === 'ImportSpecifier' && s.imported.name === 'setTimeout') timerImports.add(s.local.name);
        }
      },
      CallExpression(node) {
        const callee = node.callee;
        if (callee.type !== 'Identifier') return; // jest.setTimeout(…) configures jest, it does not sleep
        if (callee.name === 'setTimeout' && insidePromiseExecutor(node)) check(node);
        else if (callee.name === 'sleep' || callee.name === 'delay' || timerImports.has(callee.name)) check(node);
      },
    };
  },
};

export default tseslint.config(
  { ignores: ['dist/**', 'docs/api/**', 'node_modules/**', 'test/compat/nest11/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // `...args: any[]` is how TypeScript spells "any constructor / any function"; every other `any` needs a reason
      '@typescript-eslint/no-explicit-any': ['error', { ignoreRestArgs: true }],
      '@typescript-eslint/no-unused-expressions': ['error', { allowShortCircuit: true, allowTernary: true }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-empty': ['error', { allowEmptyCatch: true }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'prefer-const': 'error',
    },
  },
  {
    // the engine and the Nest face log through their logger, never the console; the engine never imports Nest
    files: ['lib/**/*.ts'],
    // the console logger itself, the CLI and the CLI's standalone console server write to the terminal
    ignores: ['lib/core/runtime/logger.ts', 'lib/cli/**', 'lib/console/server.ts'],
    rules: { 'no-console': 'error' },
  },
  {
    files: ['lib/core/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['@nestjs/*'], message: 'lib/core is framework-free' }] }] },
  },
  {
    files: ['**/*.mjs', '**/*.cjs', 'scripts/**', 'bench/**', 'test/**'],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['test/**/*.spec.ts'],
    plugins: { local: { rules: { 'no-fixed-sleep': noFixedSleep } } },
    rules: { 'local/no-fixed-sleep': 'error' },
  },
  {
    // the web console's page runs in the browser
    files: ['lib/console/static/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { ...globals.node, ...globals.commonjs } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
