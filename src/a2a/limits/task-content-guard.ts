import type { Message } from '@a2a-js/sdk';
import { DEFAULT_REDACT_KEYS, isSanitizedCheckedFrame, sanitizeForFrame, sanitizeFrame, type FrameHygieneOptions } from '../../executor/frames/sanitize-for-frame';
import type { ToolCallArtifactData } from '../../extensions';
import type { A2aConfig } from '../a2a.module-definition';
import { SecretScrubber } from '../auth/secret-scrubber';

/** JSON-safe, uncapped: the first pass, before secrets are scrubbed and the cap applies. */
const UNCAPPED: FrameHygieneOptions = { maxFieldBytes: Number.MAX_SAFE_INTEGER, redactKeys: DEFAULT_REDACT_KEYS };

/**
 * What a task stores and streams, made safe whoever produced it: the executor caps and redacts
 * its own frames, but a custom executor or bus may send anything. Tool frames are JSON-safe, with
 * secret-named keys redacted and each field capped at `maxFrameFieldBytes`; narration lines are
 * capped alike; and the server's own credentials are scrubbed from everything (the user's
 * message, frames, narration, answers) before any cap could cut one in half.
 */
export class TaskContentGuard {
  private readonly hygiene: FrameHygieneOptions;
  /** The same cap for narration lines, no keys to redact: made once (a spread per line made a hidden class per call, see withFields). */
  private readonly narrationHygiene: FrameHygieneOptions;
  private readonly secrets: SecretScrubber;

  constructor(config: Pick<A2aConfig, 'maxFrameFieldBytes' | 'auth'>) {
    this.hygiene = { maxFieldBytes: config.maxFrameFieldBytes, redactKeys: DEFAULT_REDACT_KEYS };
    this.narrationHygiene = { maxFieldBytes: config.maxFrameFieldBytes, redactKeys: [] };
    this.secrets = new SecretScrubber([...config.auth.apiKeys, ...config.auth.bearerTokens]);
  }

  /**
   * A frame as checkToolCallFrame gives it (the bus binding's) made safe: its fields are known, so
   * only their values are read; a frame already clean (the executor's own frames are) goes on as
   * it is, without a copy.
   */
  checkedFrame(frame: ToolCallArtifactData): ToolCallArtifactData {
    if (!this.secrets.active && isSanitizedCheckedFrame(frame, this.hygiene)) return frame;
    return this.sanitized(frame);
  }

  private sanitized(frame: ToolCallArtifactData): ToolCallArtifactData {
    const scrubbed = this.secrets.active ? this.secrets.value(sanitizeFrame(frame, UNCAPPED)) : frame;
    return sanitizeFrame(scrubbed, this.hygiene);
  }

  narration(text: string): string {
    return sanitizeForFrame(this.secrets.text(text), this.narrationHygiene) as string;
  }

  /** Answers and errors are not capped (the answer is the product), only scrubbed. */
  text(text: string): string {
    return this.secrets.active ? this.secrets.text(text) : text;
  }

  /**
   * A scrubber for one streamed text: each piece comes out scrubbed, and the start of a secret
   * at its end is held back until the next piece shows whether the secret follows (the last
   * piece lets everything out).
   */
  textStream(): (piece: string, last: boolean) => string {
    let held = '';
    return (piece, last) => {
      if (!this.secrets.active) return piece;
      const scrubbed = this.secrets.text(held + piece);
      const keep = last ? 0 : this.secrets.secretStartAtEnd(scrubbed);
      held = scrubbed.slice(scrubbed.length - keep);
      return scrubbed.slice(0, scrubbed.length - keep);
    };
  }

  message(message: Message): Message {
    return this.secrets.value(message);
  }
}
