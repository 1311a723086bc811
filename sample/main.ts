// The Chronos sample: `npm run sample` (one replica) or `npm run sample:cluster` (three).
import { bootstrap } from './bootstrap.js';

await bootstrap();
