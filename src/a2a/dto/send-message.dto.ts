import { Type } from 'class-transformer';
import {
  ArrayNotEmpty,
  Equals,
  IsArray,
  IsBase64,
  IsBoolean,
  IsDefined,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Min,
  ValidateNested,
} from 'class-validator';
import { HasExactlyOneOf } from './part-content.validator';

/** A2A 1.0 `Part`: one of text, raw (base64), url or data. */
export class PartDto {
  @IsOptional() @IsString() text?: string;
  @IsOptional() @IsBase64() raw?: string;
  @IsOptional() @IsString() url?: string;
  @IsOptional() data?: unknown;
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
  @IsOptional() @IsString() filename?: string;
  @IsOptional() @IsString() mediaType?: string;
}

export const PART_CONTENT_FIELDS = ['text', 'raw', 'url', 'data'] as const;

/** A2A 1.0 `Message` from the client. */
export class MessageDto {
  @IsString() @IsNotEmpty() messageId!: string;
  @Equals('ROLE_USER', { message: 'role must be ROLE_USER (a request carries the user side)' }) role!: string;
  @IsArray()
  @ArrayNotEmpty()
  @ValidateNested({ each: true })
  @Type(() => PartDto)
  @HasExactlyOneOf(PART_CONTENT_FIELDS)
  parts!: PartDto[];
  @IsOptional() @IsString() contextId?: string;
  @IsOptional() @IsString() taskId?: string;
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
  @IsOptional() @IsArray() @IsString({ each: true }) extensions?: string[];
  @IsOptional() @IsArray() @IsString({ each: true }) referenceTaskIds?: string[];
}

export class SendMessageConfigurationDto {
  @IsOptional() @IsArray() @IsString({ each: true }) acceptedOutputModes?: string[];
  @IsOptional() @IsInt() @Min(0) historyLength?: number;
  @IsOptional() @IsBoolean() returnImmediately?: boolean;
  @IsOptional() @IsObject() taskPushNotificationConfig?: Record<string, unknown>;
}

/** A2A 1.0 `SendMessageRequest` (SendMessage, SendStreamingMessage, POST /message:send|stream). */
export class SendMessageRequestDto {
  @IsOptional() @IsString() tenant?: string;
  @IsDefined() @IsObject() @ValidateNested() @Type(() => MessageDto) message!: MessageDto;
  @IsOptional() @IsObject() @ValidateNested() @Type(() => SendMessageConfigurationDto) configuration?: SendMessageConfigurationDto;
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
}
