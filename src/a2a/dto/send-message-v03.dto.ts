import { Type } from 'class-transformer';
import {
  ArrayNotEmpty,
  Equals,
  IsArray,
  IsBase64,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { HasExactlyOneOf } from './part-content.validator';

export class FileV03Dto {
  @IsOptional() @IsBase64() bytes?: string;
  @IsOptional() @IsString() uri?: string;
  @IsOptional() @IsString() mimeType?: string;
  @IsOptional() @IsString() name?: string;
}

/** A2A 0.3 `Part`: a text, file or data part told apart by `kind`. */
export class PartV03Dto {
  @IsIn(['text', 'file', 'data'], { message: 'kind must be one of text, file, data' }) kind!: string;
  @ValidateIf((part: PartV03Dto) => part.kind === 'text') @IsString() text?: string;
  @ValidateIf((part: PartV03Dto) => part.kind === 'file')
  @IsObject()
  @ValidateNested()
  @Type(() => FileV03Dto)
  @HasExactlyOneOf(['bytes', 'uri'])
  file?: FileV03Dto;
  @ValidateIf((part: PartV03Dto) => part.kind === 'data') @IsObject() data?: Record<string, unknown>;
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
}

/** A2A 0.3 `Message` from the client. */
export class MessageV03Dto {
  @Equals('message', { message: 'kind must be "message"' }) kind!: string;
  @IsString() @IsNotEmpty() messageId!: string;
  @Equals('user', { message: 'role must be "user" (a request carries the user side)' }) role!: string;
  @IsArray() @ArrayNotEmpty() @ValidateNested({ each: true }) @Type(() => PartV03Dto) parts!: PartV03Dto[];
  @IsOptional() @IsString() contextId?: string;
  @IsOptional() @IsString() taskId?: string;
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
  @IsOptional() @IsArray() @IsString({ each: true }) extensions?: string[];
  @IsOptional() @IsArray() @IsString({ each: true }) referenceTaskIds?: string[];
}

export class MessageSendConfigurationV03Dto {
  @IsOptional() @IsArray() @IsString({ each: true }) acceptedOutputModes?: string[];
  @IsOptional() @IsBoolean() blocking?: boolean;
  @IsOptional() @IsInt() @Min(0) historyLength?: number;
  @IsOptional() @IsObject() pushNotificationConfig?: Record<string, unknown>;
}

/** A2A 0.3 `MessageSendParams` (message/send, message/stream). */
export class MessageSendParamsV03Dto {
  @IsDefined() @IsObject() @ValidateNested() @Type(() => MessageV03Dto) message!: MessageV03Dto;
  @IsOptional() @IsObject() @ValidateNested() @Type(() => MessageSendConfigurationV03Dto) configuration?: MessageSendConfigurationV03Dto;
  @IsOptional() @IsObject() metadata?: Record<string, unknown>;
}
