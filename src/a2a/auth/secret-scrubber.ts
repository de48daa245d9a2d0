/** What a scrubbed secret becomes. */
export const SCRUBBED = '[redacted]';

/** The marker the frame hygiene leaves where it cut a string (see truncationMarker). */
const TRUNCATION_MARKER = '…[truncated: ';
/** A secret's prefix this long, left just before a truncation marker, is scrubbed as well. */
const MIN_CUT_PREFIX = 4;

/**
 * Removes known secret values (the server's own API keys and bearer tokens) from text and from
 * plain JSON data, wherever they sit: values, keys, or the end of a string another cap cut in
 * the middle of a secret. Key-name redaction (`apiKey: …`) is the frame hygiene's job; this one
 * catches a secret under any name, e.g. in a tool's free-text arguments.
 */
export class SecretScrubber {
  private readonly secrets: string[];

  constructor(secrets: readonly string[]) {
    // Longest first, so a secret that contains another is replaced whole.
    this.secrets = [...new Set(secrets)].filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
  }

  get active(): boolean {
    return this.secrets.length > 0;
  }

  text(text: string): string {
    let out = text;
    for (const secret of this.secrets) if (out.includes(secret)) out = out.split(secret).join(SCRUBBED);
    return out.includes(TRUNCATION_MARKER) ? this.cutPrefixes(out) : out;
  }

  /** How many characters at the end of `text` could begin a secret (that the next piece of a stream may complete). */
  secretStartAtEnd(text: string): number {
    for (let n = Math.min(text.length, (this.secrets[0]?.length ?? 1) - 1); n > 0; n--) {
      const tail = text.slice(text.length - n);
      if (this.secrets.some((secret) => secret.length > n && secret.startsWith(tail))) return n;
    }
    return 0;
  }

  /** A copy of plain JSON data (what JSON.parse or the frame hygiene yields) with every string scrubbed. */
  value<T>(value: T): T {
    if (!this.active) return value;
    return this.walk(value) as T;
  }

  private walk(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value);
    if (Array.isArray(value)) return value.map((item) => this.walk(item));
    if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return value;
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      // defineProperty: a key such as "__proto__" stays an own property, as JSON.parse made it.
      Object.defineProperty(out, this.text(key), {
        value: this.walk((value as Record<string, unknown>)[key]),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }

  /** "…sk-live-12…[truncated: 99 bytes]": the start of a secret that a cap cut off. */
  private cutPrefixes(text: string): string {
    return text
      .split(TRUNCATION_MARKER)
      .map((piece, i, pieces) => {
        if (i === pieces.length - 1) return piece;
        for (const secret of this.secrets) {
          for (let n = Math.min(secret.length - 1, piece.length); n >= MIN_CUT_PREFIX; n--) {
            if (piece.endsWith(secret.slice(0, n))) return piece.slice(0, piece.length - n) + SCRUBBED;
          }
        }
        return piece;
      })
      .join(TRUNCATION_MARKER);
  }
}
