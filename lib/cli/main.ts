#!/usr/bin/env node
// The `chronos` command line (package.json `bin`). See `chronos --help` and README "Operating Chronos".
import { main } from './program.js';

const code = await main(process.argv);
process.exitCode = code;
// a connection that will not close must not keep the command alive
setTimeout(() => process.exit(code), 2000).unref();
