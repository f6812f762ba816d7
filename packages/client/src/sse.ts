/**
 * Reading Server-Sent Events from a fetch response body, in browsers and Node alike.
 */

/** One parsed SSE frame. */
export interface SseFrame {
  /** The `id:` field, or null. */
  id: string | null;
  /** The `event:` field (`message` when absent). */
  event: string;
  /** The `data:` lines joined. */
  data: string;
}

/** Splits a byte stream into SSE frames; comment lines (keep-alive pings) are skipped. */
export async function* readSseFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<SseFrame> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
      let cut: number;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const frame: SseFrame = { id: null, event: "message", data: "" };
        const data: string[] = [];
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "id") frame.id = text;
          else if (field === "event") frame.event = text;
          else if (field === "data") data.push(text);
        }
        if (data.length === 0) continue;
        frame.data = data.join("\n");
        yield frame;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
