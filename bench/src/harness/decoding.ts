/**
 * Counts what a Rein store decodes: a serializer that delegates to the default one and adds up
 * the records and bytes it parses. Used on unmeasured runs only, since any serializer other than
 * the default one turns off the default's allocation-free storability check.
 */
import { jsonSerializer, type Serializer } from "@rein/core";

/** A serializer that counts the records and bytes it decodes. */
export class DecodeCounter implements Serializer {
  /** Records decoded since the last {@link DecodeCounter.reset}. */
  records = 0;
  /** UTF-16 code units decoded since the last reset (bytes for ASCII text). */
  chars = 0;

  serialize(value: unknown): string {
    return jsonSerializer.serialize(value);
  }

  deserialize(text: string): unknown {
    this.records++;
    this.chars += text.length;
    return jsonSerializer.deserialize(text);
  }

  /** Starts a new count. */
  reset(): void {
    this.records = 0;
    this.chars = 0;
  }
}
