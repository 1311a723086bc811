// Vitest runs one spec of its own (test/vitest/): proof that @chronos/nest/testing works in Vitest as in
// Jest. Nest's constructor injection and @TaskHandler payload classes read `design:*` decorator
// metadata, which Vitest's default transform (esbuild/oxc) does not emit; SWC does (unplugin-swc, as the
// NestJS docs recommend for Vitest). Jest gets the same metadata from ts-jest (jest.config.js).
import { fileURLToPath } from 'node:url';
import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  plugins: [
    swc.vite({
      jsc: {
        parser: { syntax: 'typescript', decorators: true },
        transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
        target: 'es2022',
      },
    }),
  ],
  resolve: {
    // the spec imports the package by name, as a user's would: the sources (one copy of each class)
    alias: [
      { find: /^@chronos\/nest\/testing$/, replacement: here('./lib/nest/testing/index.ts') },
      { find: /^@chronos\/nest$/, replacement: here('./lib/index.ts') },
    ],
  },
  test: {
    include: ['test/vitest/**/*.vitest.ts'],
    environment: 'node',
    testTimeout: 20000,
  },
});
