#!/usr/bin/env node
// The `chronos` command line (package.json `bin`). See `chronos --help` and README "Operating Chronos".
import { main } from './program.js';

const code = await main(process.argv);
// exit once stdout is flushed: a connection that will not close must not keep the command alive
process.stdout.write('', () => process.exit(code));
