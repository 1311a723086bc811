import { Injectable, Logger } from '@nestjs/common';
import { TaskHandler, WorkerService, type ScheduleDefinition, type Task } from '@chronos/nest';

/** The task type of every tenant's digest schedule (added at run time by `TenantsController`). */
export const TENANT_DIGEST = 'tenant.digest';

/** The name of a tenant's digest schedule: stable, so the same tenant always maps to the same schedule. */
export function digestScheduleName(tenant: string): string {
  return `tenant.${tenant}.digest`;
}

/**
 * A tenant's digest schedule: its cron read in the tenant's zone, labelled with the tenant, so
 * `chronos schedule ls --label tenant=acme` (and the console's filter) finds every schedule of one tenant.
 */
export function digestDefinition(tenant: string, cron: string, timeZone?: string): ScheduleDefinition {
  return {
    name: digestScheduleName(tenant),
    spec: cron,
    timeZone,
    type: TENANT_DIGEST,
    payload: { tenant },
    labels: { tenant, kind: 'digest' },
  };
}

@Injectable()
export class TenantDigestService {
  private readonly logger = new Logger(TenantDigestService.name);

  constructor(private readonly worker: WorkerService) {}

  /** Runs once per trigger of a tenant's digest schedule, on whichever replica fetches it. */
  @TaskHandler(TENANT_DIGEST)
  send(task: Task<{ tenant: string }>): void {
    this.logger.log(`Digest of tenant ${task.payload.tenant} sent (task=${task.id} instance=${this.worker.serverId})`);
  }
}
