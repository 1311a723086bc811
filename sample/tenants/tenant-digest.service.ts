import { Injectable, Logger } from '@nestjs/common';
import { TaskHandler, WorkerService, type Task } from '@chronos/nest';

/** The task type of every tenant's digest schedule (added at run time by `TenantsController`). */
export const TENANT_DIGEST = 'tenant.digest';

/** The name of a tenant's digest schedule: stable, so the same tenant always maps to the same schedule. */
export function digestScheduleName(tenant: string): string {
  return `tenant.${tenant}.digest`;
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
