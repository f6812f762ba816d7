/**
 * What one user of the protocol comparison does, through `@langchain/langgraph-sdk`'s `Client`
 * only (no server-specific code): create a thread and stream a run until it pauses, then resume
 * it with `command: { resume }` — a value when one question is pending, a map by interrupt id
 * when two are — and stream until it is done. Each call checks what it got and throws otherwise.
 */
import { Client } from "@langchain/langgraph-sdk";
import { FANOUT_INPUT, REFUND_INPUT, type Message } from "./shapes.ts";

/** The graphs compared. */
export const GRAPHS = ["refund", "fanout"] as const;

/** One of {@link GRAPHS}. */
export type GraphName = (typeof GRAPHS)[number];

/** A pending question as the SDK shows it in `values.__interrupt__`. */
export interface Pending {
  id: string;
  value: unknown;
}

/** A paused thread. */
export interface Paused {
  threadId: string;
  pending: Pending[];
}

/** How many questions each graph asks at once. */
const QUESTIONS: Record<GraphName, number> = { refund: 1, fanout: 2 };

/** An SDK client without retries, so a failure shows instead of being hidden by a retry. */
export function sdkClient(apiUrl: string): Client {
  return new Client({ apiUrl, callerOptions: { maxRetries: 0 } });
}

/** What one streamed run showed. */
interface Streamed {
  /** The last `values` event that was a state (not a bare `__interrupt__` announcement). */
  values: Record<string, unknown>;
  /**
   * Every question the run's `values` events announced, merged by id as the SDK's `useStream`
   * merges them: LangGraph announces two parallel questions in two events, in either order
   * relative to the state events.
   */
  questions: Pending[];
}

/** Streams one run in `values` mode. */
async function streamRun(
  client: Client,
  threadId: string,
  graph: GraphName,
  payload: { input?: unknown; command?: { resume: unknown } },
): Promise<Streamed> {
  let values: Record<string, unknown> | undefined;
  const questions = new Map<string, Pending>();
  const stream = client.runs.stream(threadId, graph, {
    ...(payload.input === undefined ? {} : { input: payload.input as Record<string, unknown> }),
    ...(payload.command ? { command: payload.command } : {}),
    streamMode: "values",
  });
  for await (const chunk of stream) {
    if (chunk.event === "error")
      throw new Error(`${graph} run failed: ${JSON.stringify(chunk.data)}`);
    if (chunk.event !== "values") continue;
    const data = chunk.data as Record<string, unknown>;
    for (const p of pendingOf(data)) questions.set(p.id, p);
    if (Object.keys(data).some((key) => key !== "__interrupt__")) values = data;
  }
  if (!values) throw new Error(`${graph} run on ${threadId} streamed no state`);
  return { values, questions: [...questions.values()] };
}

function pendingOf(values: Record<string, unknown>): Pending[] {
  return ((values["__interrupt__"] as Pending[] | undefined) ?? []).map((p) => ({
    id: p.id,
    value: p.value,
  }));
}

/** Creates a thread and streams `graph` on it until it pauses with all its questions. */
export async function startPaused(client: Client, graph: GraphName): Promise<Paused> {
  const thread = await client.threads.create();
  const { questions: pending } = await streamRun(client, thread.thread_id, graph, {
    input: graph === "refund" ? REFUND_INPUT : FANOUT_INPUT,
  });
  if (pending.length !== QUESTIONS[graph] || pending.some((p) => typeof p.id !== "string"))
    throw new Error(
      `${graph} did not pause with ${QUESTIONS[graph]} questions: ${JSON.stringify(pending)}`,
    );
  return { threadId: thread.thread_id, pending };
}

/** The answer a person gives to one question of `graph`. */
export function answerTo(graph: GraphName): unknown {
  return graph === "refund" ? { type: "approve" } : { text: "ok" };
}

/** Checks the final state of a completed run of `graph`. */
function checkDone(graph: GraphName, { values, questions }: Streamed): void {
  if (questions.length > 0)
    throw new Error(`${graph} still pending after resume: ${JSON.stringify(questions)}`);
  if (graph === "refund") {
    const last = (values["messages"] as Message[] | undefined)?.at(-1);
    if (last?.type !== "tool" || !last.content.startsWith("refunded"))
      throw new Error(`refund did not complete: ${JSON.stringify(values)}`);
  } else {
    const log = (values["log"] as string[] | undefined) ?? [];
    if (!log.at(-1)?.startsWith("report"))
      throw new Error(`fanout did not complete: ${JSON.stringify(values)}`);
  }
}

/**
 * Answers every pending question of a paused thread in one resume and streams it to the end: a
 * plain value for the single refund question, a map by interrupt id for the two sub-agents.
 */
export async function resumeDone(client: Client, graph: GraphName, paused: Paused): Promise<void> {
  const resume =
    paused.pending.length === 1
      ? answerTo(graph)
      : Object.fromEntries(paused.pending.map((p) => [p.id, answerTo(graph)]));
  checkDone(graph, await streamRun(client, paused.threadId, graph, { command: { resume } }));
}

/**
 * Answers one question of a paused thread by its id (a map of one) and returns what is still
 * pending afterwards (empty once the run completed).
 */
export async function answerOne(
  client: Client,
  graph: GraphName,
  threadId: string,
  interruptId: string,
): Promise<Pending[]> {
  const streamed = await streamRun(client, threadId, graph, {
    command: { resume: { [interruptId]: answerTo(graph) } },
  });
  if (streamed.questions.length === 0) checkDone(graph, streamed);
  return streamed.questions;
}
