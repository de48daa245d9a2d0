import { Transform, Type } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsISO8601, IsNotEmpty, IsObject, IsOptional, IsString, Max, Min } from 'class-validator';

/** Query strings carry booleans as "true" / "false". */
const toBoolean = ({ value }: { value: unknown }): unknown => (value === 'true' ? true : value === 'false' ? false : value);

export const TASK_STATE_NAMES = [
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_AUTH_REQUIRED',
] as const;

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 50;

/** GetTask (1.0) and tasks/get (0.3 `TaskQueryParams`). */
export class GetTaskRequestDto {
  @IsString() @IsNotEmpty() id!: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) historyLength?: number;
  @IsOptional() @IsString() tenant?: string;
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
}

/** CancelTask and SubscribeToTask (1.0), tasks/cancel and tasks/resubscribe (0.3 `TaskIdParams`). */
export class TaskIdRequestDto {
  @IsString() @IsNotEmpty() id!: string;
  @IsOptional() @IsString() tenant?: string;
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
}

/** ListTasks (1.0 only); over HTTP+JSON its fields are query parameters. */
export class ListTasksRequestDto {
  @IsOptional() @IsString() tenant?: string;
  @IsOptional() @IsString() contextId?: string;
  @IsOptional() @IsIn(TASK_STATE_NAMES, { message: `status must be one of ${TASK_STATE_NAMES.join(', ')}` }) status?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(MAX_PAGE_SIZE) pageSize?: number;
  @IsOptional() @IsString() pageToken?: string;
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) historyLength?: number;
  @IsOptional() @IsISO8601({ strict: true }) statusTimestampAfter?: string;
  @IsOptional() @Transform(toBoolean) @IsBoolean() includeArtifacts?: boolean;
}
