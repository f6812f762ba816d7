import { describe, expect, it } from "vitest";
import { z } from "zod";
import { InvalidInputError } from "../errors.ts";
import type { Model, ModelDelta } from "./messages.ts";
import { assemble, callModel } from "./model-call.ts";
import { toolSpecs } from "./tool-node.ts";

async function* stream(deltas: ModelDelta[]): AsyncGenerator<ModelDelta> {
  for (const d of deltas) {
    await Promise.resolve();
    yield d;
  }
}

const options = { tools: [], signal: new AbortController().signal };

describe("callModel", () => {
  it("assembles a delta stream into one message and forwards every delta", async () => {
    const seen: ModelDelta[] = [];
    const deltas: ModelDelta[] = [
      { type: "reasoning", text: "Check " },
      { type: "reasoning", text: "first.", signature: "sig" },
      { type: "text", text: "Refunding " },
      { type: "text", text: "now." },
      { type: "tool-call", call: { id: "c1", name: "refund", args: { amount: 5 } } },
      { type: "usage", usage: { inputTokens: 10 } },
      { type: "usage", usage: { outputTokens: 4 } },
      { type: "id", id: "resp_1", model: "m-1" },
    ];
    const message = await callModel(
      () => stream(deltas),
      [],
      options,
      (d) => seen.push(d),
    );
    expect(seen).toEqual(deltas);
    expect(message).toEqual({
      role: "assistant",
      content: [
        { type: "reasoning", text: "Check first.", signature: "sig" },
        { type: "text", text: "Refunding now." },
      ],
      toolCalls: [{ id: "c1", name: "refund", args: { amount: 5 } }],
      usage: { inputTokens: 10, outputTokens: 4 },
      id: "resp_1",
      model: "m-1",
    });
  });

  it("stores a text-only stream as a string, like a returned message", async () => {
    expect(await assemble(stream([{ type: "text", text: "hi" }]))).toEqual({
      role: "assistant",
      content: "hi",
    });
    expect((await assemble(stream([]))).content).toBe("");
  });

  it("refuses a model that returns something other than an assistant message", async () => {
    const bad = (() => ({ role: "user", content: "?" })) as Model;
    await expect(callModel(bad, [], options)).rejects.toBeInstanceOf(InvalidInputError);
  });
});

describe("toolSpecs", () => {
  it("refuses a schema with no JSON Schema form, naming the tool and the way out", () => {
    const error = (() => {
      try {
        toolSpecs([{ name: "when", schema: z.object({ at: z.date() }), run: () => null }]);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toMatch(/Tool "when".*pass `jsonSchema`/);
  });

  it("uses a hand-written JSON Schema when given", () => {
    const parameters = { type: "object", properties: { q: { type: "string" } } };
    expect(toolSpecs([{ name: "search", jsonSchema: parameters, run: () => null }])).toEqual([
      { name: "search", description: "", parameters },
    ]);
  });
});
