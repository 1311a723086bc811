// ESLint (flat config): typescript-eslint's recommended rules plus the house rules that a reviewer
// would otherwise have to remember. Formatting is Prettier's job (.prettierrc.json), not ESLint's.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

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
