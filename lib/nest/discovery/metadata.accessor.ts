import { Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { SCHEDULE_METADATA, TASK_HANDLER_METADATA } from '../chronos.constants.js';
import type { ScheduleMetadata } from '../decorators/schedule-options.interface.js';
import type { TaskHandlerMetadata } from '../decorators/task-handler.decorator.js';

/** Typed reads of the metadata the decorators record. @internal */
@Injectable()
export class ChronosMetadataAccessor {
  constructor(private readonly reflector: Reflector) {}

  schedules(target: unknown): ScheduleMetadata[] {
    if (typeof target !== 'function') return [];
    return this.reflector.get<ScheduleMetadata[] | undefined>(SCHEDULE_METADATA, target) ?? [];
  }

  taskHandlers(target: unknown): TaskHandlerMetadata[] {
    if (typeof target !== 'function') return [];
    return this.reflector.get<TaskHandlerMetadata[] | undefined>(TASK_HANDLER_METADATA, target) ?? [];
  }
}
