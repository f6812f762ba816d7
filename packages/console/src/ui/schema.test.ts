import { describe, expect, it } from "vitest";
import { checkSchema } from "./schema.ts";

/** What zod's toJSONSchema emits for the decision answer union. */
const decision = {
  oneOf: [
    {
      type: "object",
      properties: { type: { type: "string", const: "accept" } },
      required: ["type"],
      additionalProperties: false,
    },
    {
      type: "object",
      properties: {
        type: { type: "string", const: "edit" },
        args: { type: "object", additionalProperties: {} },
      },
      required: ["type", "args"],
      additionalProperties: false,
    },
  ],
};

describe("checkSchema", () => {
  it("passes values that match one option of a oneOf", () => {
    expect(checkSchema(decision, { type: "accept" })).toEqual([]);
    expect(checkSchema(decision, { type: "edit", args: { amount: 3 } })).toEqual([]);
  });

  it("reports the closest option's problems when no option matches", () => {
    expect(checkSchema(decision, { type: "edit" })).toEqual([
      { path: "args", message: "args is required" },
    ]);
    expect(checkSchema(decision, { type: "accept", extra: 1 })).toEqual([
      { path: "extra", message: "extra is not expected" },
    ]);
  });

  it("checks types, bounds, enums and nested items with their paths", () => {
    const schema = {
      type: "object",
      properties: {
        text: { type: "string", maxLength: 3 },
        n: { type: "integer", minimum: 1 },
        tags: { type: "array", items: { enum: ["a", "b"] } },
      },
    };
    expect(checkSchema(schema, { text: "long", n: 0, tags: ["a", "c"] })).toEqual([
      { path: "text", message: "text must have at most 3 characters" },
      { path: "n", message: "n must be at least 1" },
      { path: "tags.1", message: 'tags.1 must be one of "a", "b"' },
    ]);
    expect(checkSchema(schema, [])).toEqual([
      { path: "", message: "the answer must be an object" },
    ]);
    expect(checkSchema({ type: "integer" }, 1.5)).toHaveLength(1);
    expect(checkSchema({ type: "number" }, 2)).toEqual([]);
  });

  it("lets unknown keywords through (the server checks again)", () => {
    expect(checkSchema({ format: "email", pattern: "^x" }, "anything")).toEqual([]);
    expect(checkSchema(true, 1)).toEqual([]);
    expect(checkSchema(false, 1)).toHaveLength(1);
  });
});
