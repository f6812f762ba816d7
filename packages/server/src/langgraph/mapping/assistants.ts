/**
 * Assistants as LangGraph's protocol names them are the graphs this server runs: one assistant
 * per served graph, whose `assistant_id` is the graph's name, or the UUID LangGraph's own server
 * derives from that name (so a client that stored either form finds the same graph).
 */
import { createHash } from "node:crypto";
import { NotFoundError } from "@rein/core";
import type { GraphRegistry } from "../../registry.ts";

/** The UUID namespace LangGraph's server derives a graph's assistant id in (RFC 4122 URL). */
const NAMESPACE_GRAPH = "6ba7b821-9dad-11d1-80b4-00c04fd430c8";

/** A UUID version 5 (SHA-1, name-based) of `name` in `namespace`. */
function uuidV5(name: string, namespace: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ""), "hex");
  const bytes = createHash("sha1").update(ns).update(name, "utf8").digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The UUID form of a graph's assistant id: the one LangGraph's server gives the default
 * assistant of a graph (`uuid5(graph_id, NAMESPACE_GRAPH)`), so ids stored by a client of
 * LangGraph's server keep working here.
 */
export function assistantUuidOf(graph: string): string {
  let uuid = UUIDS.get(graph);
  if (uuid === undefined) {
    uuid = uuidV5(graph, NAMESPACE_GRAPH);
    // Graph names are few (the served graphs): every run and thread view asks again.
    if (UUIDS.size < 1000) UUIDS.set(graph, uuid);
  }
  return uuid;
}

/** Assistant UUIDs by graph name, computed once (a SHA-1 per request showed in profiles). */
const UUIDS = new Map<string, string>();

/** An assistant as the SDK reads it (`Assistant` in `@langchain/langgraph-sdk`'s schema). */
export interface LgAssistant {
  assistant_id: string;
  graph_id: string;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  metadata: Record<string, unknown>;
  version: number;
  name: string;
  description: string | null;
}

/** When the served assistants were "created": the server's start, as they come with it. */
const STARTED = new Date().toISOString();

/** The assistant of a served graph. Its id is the UUID form; the graph name works as well. */
export function assistantOf(graph: string): LgAssistant {
  return {
    assistant_id: assistantUuidOf(graph),
    graph_id: graph,
    config: {},
    context: {},
    created_at: STARTED,
    updated_at: STARTED,
    metadata: { created_by: "system" },
    version: 1,
    name: graph,
    description: null,
  };
}

/**
 * The graph an `assistant_id` names: a served graph's name, or its UUID form.
 *
 * @throws NotFoundError when no served graph has that name or UUID.
 */
export function graphOfAssistant(registry: GraphRegistry, assistantId: string): string {
  const names = registry.names();
  if (names.includes(assistantId)) return assistantId;
  for (const name of names) if (assistantUuidOf(name) === assistantId) return name;
  throw new NotFoundError("assistant", assistantId);
}
