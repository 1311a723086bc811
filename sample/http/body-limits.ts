import type { IncomingMessage } from 'node:http';
import type { NestExpressApplication } from '@nestjs/platform-express';

/**
 * The JSON body limit of the bulk route `PUT /tenants/digests`. Express's default (100 KB) took
 * about 1,200 tenants of ~85 bytes (`{"id":"tenant-00001","cron":"0 8 * * MON-FRI","timeZone":"Europe/Paris"}`);
 * 10 MB takes ~100,000 of them, or ~30,000 of the largest an entry can be (a 186-character id: a
 * schedule name is at most 200 characters), while one request's body stays bounded in memory.
 * `upsertSchedules` itself has no maximum (it writes ~125 definitions per Redis call).
 */
export const BULK_BODY_LIMIT = '10mb';

/** The routes that take {@link BULK_BODY_LIMIT}; every other route keeps express's default 100 KB. */
export const BULK_ROUTES: readonly string[] = ['/tenants/digests'];

function isBulkJson(req: IncomingMessage): boolean {
  const path = (req.url ?? '/').split('?', 1)[0];
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0].trim().toLowerCase();
  return type === 'application/json' && BULK_ROUTES.includes(path);
}

/**
 * The app's JSON body parsers, before `listen`/`init` (Nest then adds only the urlencoded one): the
 * bulk routes' with {@link BULK_BODY_LIMIT}, then express's default (100 KB) for every other
 * JSON body (it skips a body already read). A body over its limit is a 413.
 */
export function useBodyLimits(app: NestExpressApplication): void {
  app.useBodyParser('json', { limit: BULK_BODY_LIMIT, type: isBulkJson });
  app.useBodyParser('json');
}
