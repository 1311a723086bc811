import { BadRequestException, Body, Controller, Delete, HttpCode, NotFoundException, Param, Put } from '@nestjs/common';
import { DuplicateScheduleError, InvalidScheduleError, SchedulerService } from '@chronos/nest';
import { digestDefinition, digestScheduleName } from '../tenants/tenant-digest.service.js';

/** A 400 for a one-tenant route: the schedule's error without the bulk call's "definition [0] of the call". */
function oneDefinition(err: InvalidScheduleError): BadRequestException {
  return new BadRequestException(new InvalidScheduleError(err.schedule, err.value, err.problem).message);
}

/** A value as JSON for an error message, cut at 200 characters (a bulk body may be megabytes). */
function briefJson(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** A tenant's digest settings: a 5-field cron (`'0 8 * * MON-FRI'`) read in an IANA zone. */
interface DigestBody {
  cron?: unknown;
  timeZone?: unknown;
}

/**
 * Per-tenant schedules at run time: each tenant's digest is a schedule in Redis (fired once per
 * trigger fleet-wide, whichever replica took the request), written with `upsertSchedules`, so
 * sending the same settings again changes nothing; labelled `tenant=<id>`, `kind=digest`.
 */
@Controller('tenants')
export class TenantsController {
  constructor(private readonly scheduler: SchedulerService) {}

  /**
   * PUT /tenants/:id/digest {"cron": "0 8 * * MON-FRI", "timeZone": "Europe/Paris"} → 200 with
   * `{ schedule, added, changed, unchanged }`; 400 for a bad cron or zone, or a field other than `cron` and
   * `timeZone` (nothing written).
   */
  @Put(':id/digest')
  @HttpCode(200)
  async setDigest(@Param('id') id: string, @Body() body: DigestBody) {
    return { schedule: digestScheduleName(id), ...(await this.upsert([body], false, id)) };
  }

  /**
   * PUT /tenants/digests [{"id": "acme", "cron": "0 8 * * *", "timeZone": "UTC"}, …] → 200 with
   * `{ added, changed, unchanged }`: many tenants in one call (~125 per Redis call); one bad entry
   * (an empty `id` too: its schedule could not be reached by the one-tenant routes) → 400 naming it
   * and its index, and nothing is written.
   */
  @Put('digests')
  @HttpCode(200)
  async setDigests(@Body() body: unknown) {
    if (!Array.isArray(body)) throw new BadRequestException('expected an array of {"id", "cron", "timeZone"}');
    return this.upsert(body as ({ id?: unknown } & DigestBody)[], true);
  }

  /** DELETE /tenants/:id/digest → 200 with `{ schedule, removed: 1 }`; 404 when the tenant has no digest; 400 for an id no schedule name can hold. */
  @Delete(':id/digest')
  async removeDigest(@Param('id') id: string) {
    const schedule = digestScheduleName(id);
    const { removed } = await this.scheduler.removeSchedules([schedule]).catch((err: unknown) => {
      if (err instanceof InvalidScheduleError) throw oneDefinition(err);
      throw err;
    });
    if (removed === 0) throw new NotFoundException(`tenant ${JSON.stringify(id)} has no digest schedule (${schedule})`);
    return { schedule, removed };
  }

  /**
   * Upserts the entries' digests; `bulk` names a bad entry by its index (the one-tenant route has
   * none, and its tenant is `pathId`). A field other than the route's is a 400 naming it: dropped, a
   * misspelt `timezone` would store the digest in UTC, and an `id` in the one-tenant body would
   * override the path's tenant.
   */
  private async upsert(entries: ({ id?: unknown } & DigestBody)[], bulk: boolean, pathId?: string) {
    const fields = bulk ? ['id', 'cron', 'timeZone'] : ['cron', 'timeZone'];
    const want = `{${bulk ? '"id": string, ' : ''}"cron": string, "timeZone"?: string}`;
    const defs = entries.map((e, i) => {
      const where = bulk ? `entry [${i}]: ` : '';
      const id = bulk ? e?.id : pathId;
      if (typeof e !== 'object' || e === null || Array.isArray(e))
        throw new BadRequestException(`${where}expected ${want}, got ${briefJson(e)}`);
      const unknown = Object.keys(e).filter((k) => !fields.includes(k));
      if (unknown.length > 0) {
        const named = unknown.map((k) => JSON.stringify(k)).join(', ');
        throw new BadRequestException(`${where}unknown field${unknown.length > 1 ? 's' : ''} ${named} (expected ${want})`);
      }
      if (typeof id !== 'string' || typeof e.cron !== 'string' || (e.timeZone !== undefined && typeof e.timeZone !== 'string')) {
        throw new BadRequestException(`${where}expected ${want}, got ${briefJson(e)}`);
      }
      // "" makes the valid name "tenant..digest", which no /tenants/:id/digest route can reach to change or remove
      if (id === '') throw new BadRequestException(`${where}"id" is empty: expected a tenant id (the :id of /tenants/:id/digest)`);
      return digestDefinition(id, e.cron, e.timeZone);
    });
    try {
      return await this.scheduler.upsertSchedules(defs);
    } catch (err) {
      if (err instanceof InvalidScheduleError && !bulk) throw oneDefinition(err);
      if (err instanceof InvalidScheduleError || err instanceof DuplicateScheduleError) throw new BadRequestException(err.message);
      throw err;
    }
  }
}
