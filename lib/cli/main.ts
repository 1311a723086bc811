#!/usr/bin/env node
// The `chronos` command line (package.json `bin`). See `chronos --help` and README "Operating Chronos".
import { main } from './program.js';

// a reader that stops reading (`chronos schedule ls | head`) ends the command quietly, exit 0, as it
// ends a Unix tool; unhandled, the write's EPIPE was a Node stack trace and exit 1 (trial 37)
for (const stream of [process.stdout, process.stderr])
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });

const code = await main(process.argv);
// exit once stdout is flushed: a connection that will not close must not keep the command alive
process.stdout.write('', () => process.exit(code));
