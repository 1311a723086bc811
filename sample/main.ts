// The Chronos sample: `npm run sample` (one replica) or `npm run sample:cluster` (three).
import { Logger } from '@nestjs/common';
import { bootstrap } from './bootstrap.js';

try {
  await bootstrap();
} catch (err) {
  // the app closed what it opened (bootstrap.ts); a port in use needs one line, anything else its stack too
  const portInUse = err instanceof Error && (err.cause as NodeJS.ErrnoException | undefined)?.code === 'EADDRINUSE';
  new Logger('Sample').error(err instanceof Error ? err.message : String(err), portInUse ? undefined : (err as Error).stack);
  process.exitCode = 1;
}
