// Vitest runs one spec of its own (test/vitest/): proof that @chronos/nest/testing works in Vitest as in
// Jest. Nest's constructor injection and @TaskHandler payload classes read `design:*` decorator
// metadata. Vitest 4 transforms TypeScript with Vite 8's oxc, which emits it when tsconfig.json has
// `experimentalDecorators` and `emitDecoratorMetadata` (ours does); Vitest 3 and older (esbuild) do not,
// and need unplugin-swc (docs/testing.md). Jest gets the same metadata from ts-jest (jest.config.js).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
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
