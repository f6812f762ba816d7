import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { append, lastValue } from "../channels.ts";
import { MemorySaver } from "../checkpoint/memory.ts";
import { Command } from "../graph/command.ts";
import { END, START, StateGraph } from "../api/state-graph.ts";
import { agent } from "../prebuilt/agent.ts";
import type { Model } from "../prebuilt/messages.ts";
import { lastAssistantText, subAgent } from "../prebuilt/sub-agent.ts";
import { tool } from "../prebuilt/tool-node.ts";
import { SpanAttributes as A, SpanNames } from "./tracing.ts";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  trace.disable();
  context.disable();
  await provider.shutdown();
});
beforeEach(() => exporter.reset());

const model: Model = (messages) =>
  messages.some((m) => m.role === "tool")
    ? { role: "assistant", content: "refunded", usage: { inputTokens: 40, outputTokens: 3 } }
    : {
        role: "assistant",
        content: "",
        id: "resp_1",
        model: "scripted-1",
        toolCalls: [{ id: "call_1", name: "refund", args: { amount: 50 } }],
        usage: { inputTokens: 20, outputTokens: 8 },
      };

function refundAgent(saver: MemorySaver) {
  return agent({
    name: "refund_agent",
    model,
    tools: [tool({ name: "refund", schema: z.object({ amount: z.number() }), run: () => "ok" })],
    approve: ["refund"],
    checkpointer: saver,
  });
}

const named = (name: string) => exporter.getFinishedSpans().filter((s) => s.name === name);
const parentOf = (span: ReadableSpan) =>
  exporter
    .getFinishedSpans()
    .find((s) => s.spanContext().spanId === span.parentSpanContext?.spanId);

describe("OpenTelemetry spans", () => {
  it("spans runs, steps, tasks, model and tool calls, interrupts and answers with their ids", async () => {
    const graph = refundAgent(new MemorySaver());
    const paused = await graph.invoke(
      { messages: [{ role: "user", content: "refund order 1042" }] },
      { threadId: "otel-1" },
    );
    const interruptId = paused.interrupts[0]?.id as string;
    const [interrupt] = named(SpanNames.interrupt);
    expect(interrupt?.attributes).toMatchObject({
      [A.threadId]: "otel-1",
      [A.interruptId]: interruptId,
      [A.node]: "tools",
    });
    // The interrupt is marked inside the tool call, inside the tools task.
    expect(parentOf(interrupt as ReadableSpan)?.name).toBe(SpanNames.tool);
    expect(named(SpanNames.tool)[0]?.attributes[A.outcome]).toBe("paused");

    exporter.reset();
    await graph.invoke(
      Command.resumeMap(
        { [interruptId]: { type: "edit", args: { amount: 25 } } },
        { actor: "alice@example.com" },
      ),
      { threadId: "otel-1" },
    );
    const [answer] = named(SpanNames.answer);
    expect(answer?.attributes).toMatchObject({
      [A.threadId]: "otel-1",
      [A.interruptId]: interruptId,
      [A.actor]: "alice@example.com",
      [A.outcome]: "applied",
    });
    const [toolSpan] = named(SpanNames.tool);
    expect(toolSpan?.attributes).toMatchObject({
      [A.toolName]: "refund",
      [A.toolCallId]: "call_1",
      [A.decision]: "edit",
      [A.actor]: "alice@example.com",
      [A.outcome]: "done",
    });
    const [modelSpan] = named(SpanNames.model);
    expect(modelSpan?.attributes).toMatchObject({
      [A.threadId]: "otel-1",
      [A.inputTokens]: 40,
      [A.outputTokens]: 3,
      [A.node]: "model",
    });
    // model call ⊂ task "model" ⊂ step ⊂ run, all with the run's id.
    const task = parentOf(modelSpan as ReadableSpan);
    expect(task?.name).toBe(SpanNames.task);
    expect(task?.attributes[A.node]).toBe("model");
    const step = parentOf(task as ReadableSpan);
    expect(step?.name).toBe(SpanNames.step);
    const run = parentOf(step as ReadableSpan);
    expect(run?.name).toBe(SpanNames.run);
    expect(run?.attributes).toMatchObject({ [A.outcome]: "done", [A.graph]: "refund_agent" });
    expect(task?.attributes[A.runId]).toBe(run?.attributes[A.runId]);
  });

  it("a sub-agent's run span is a child of its parent's task, with its parent run id", async () => {
    const saver = new MemorySaver();
    const graph = new StateGraph({ ticket: lastValue<string>(), notes: append<string>() })
      .addNode(
        "refund",
        subAgent(refundAgent(saver), {
          input: (s) => ({ messages: [{ role: "user" as const, content: s.ticket }] }),
          output: (v) => ({ notes: lastAssistantText(v.messages) }),
        }),
      )
      .addEdge(START, "refund")
      .addEdge("refund", END)
      .compile({ name: "desk", checkpointer: saver });
    const r = await graph.invoke({ ticket: "order 1042" }, { threadId: "otel-2" });
    expect(r.status).toBe("interrupted");
    const runs = named(SpanNames.run);
    const child = runs.find((s) => s.attributes[A.graph] === "refund_agent");
    const root = runs.find((s) => s.attributes[A.graph] === "desk");
    expect(child?.attributes[A.parentRunId]).toBe(root?.attributes[A.runId]);
    expect(child?.attributes[A.outcome]).toBe("interrupted");
    expect(parentOf(child as ReadableSpan)?.attributes).toMatchObject({ [A.node]: "refund" });
    expect(root?.attributes[A.outcome]).toBe("interrupted");
  });
});
