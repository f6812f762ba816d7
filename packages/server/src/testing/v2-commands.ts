/**
 * A raw v2 command (`POST {base}/threads/{id}/commands`), as the SDK's HTTP transport sends it:
 * the protocol suites use it for what the SDK would not send (bad params, unknown methods).
 */

/** A JSON object as the command route answers it. */
export type Json = Record<string, unknown>;

/** Sends `body` (a string is sent as it is) as the caller of `apiKey`; status and parsed body. */
export async function sendCommand(
  base: string,
  apiKey: string,
  threadId: string,
  body: unknown,
): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${base}/threads/${threadId}/commands`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": apiKey },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Json };
}
