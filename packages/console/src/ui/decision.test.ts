import { describe, expect, it } from "vitest";
import {
  argChanges,
  argFields,
  asDecision,
  checkAnswer,
  decisionAnswer,
  readArgs,
  respondField,
} from "./decision.ts";

const payload = {
  action: "issue_refund",
  args: { ticket: "T-1", amount: 120, urgent: false, items: [1, 2] },
  description: "Refund?",
  allow: { accept: true, edit: true, respond: false },
};

describe("decision convention", () => {
  it("recognises decision payloads and reads allow strictly", () => {
    const d = asDecision(payload);
    expect(d?.action).toBe("issue_refund");
    expect(d?.allow).toEqual({ accept: true, edit: true, respond: false, ignore: false });
    expect(asDecision({ question: "Proceed?" })).toBeNull();
    expect(asDecision({ action: "x", args: [], allow: {} })).toBeNull();
    expect(asDecision("text")).toBeNull();
  });

  it("reads context, the irreversible flag and argument units, dropping malformed entries", () => {
    const d = asDecision({
      ...payload,
      irreversible: true,
      argsSchema: { properties: { amount: { type: "number", unit: "USD" } } },
      context: {
        summary: "Full refund proposed.",
        messages: [{ role: "user", text: "Ticket T-1" }, { role: "user" }],
        facts: [{ label: "Customer", value: "Dana" }, { label: 3 }],
        links: [
          { label: "Order", href: "https://shop.example/1042" },
          { label: "Bad", href: "javascript:alert(1)" },
        ],
      },
    });
    expect(d?.irreversible).toBe(true);
    expect(d?.units).toEqual({ amount: "USD" });
    expect(d?.context).toEqual({
      summary: "Full refund proposed.",
      messages: [{ role: "user", text: "Ticket T-1" }],
      facts: [{ label: "Customer", value: "Dana" }],
      links: [{ label: "Order", href: "https://shop.example/1042" }],
    });
    expect(asDecision(payload)?.irreversible).toBe(false);
    expect(asDecision(payload)?.context).toBeNull();
  });

  it("lists the arguments an edit changes", () => {
    expect(argChanges({ a: 1, b: "x" }, { a: 2, b: "x", c: true })).toEqual([
      { name: "a", before: 1, after: 2 },
      { name: "c", before: undefined, after: true },
    ]);
    expect(argChanges({ a: [1] }, { a: [1] })).toEqual([]);
  });

  it("edits a multi-line or long string in a text area", () => {
    const fields = argFields({ subject: "Hi", body: "Hi Dana,\n\nSorry.", note: "x".repeat(81) });
    expect(fields.map((f) => f.kind)).toEqual(["string", "text", "text"]);
    expect(readArgs(fields, { body: "line 1\nline 2" })).toMatchObject({
      ok: true,
      args: { body: "line 1\nline 2" },
    });
  });

  it("generates typed fields and reads them back with their types", () => {
    const fields = argFields(payload.args);
    expect(fields.map((f) => [f.name, f.kind])).toEqual([
      ["ticket", "string"],
      ["amount", "number"],
      ["urgent", "boolean"],
      ["items", "json"],
    ]);
    const read = readArgs(fields, { amount: "40.5", urgent: "true", items: "[3]" });
    expect(read).toEqual({
      ok: true,
      args: { ticket: "T-1", amount: 40.5, urgent: true, items: [3] },
    });
  });

  it("refuses a non-number amount and broken JSON before anything is sent", () => {
    const read = readArgs(argFields(payload.args), { amount: "forty", items: "[3" });
    expect(read).toEqual({
      ok: false,
      problems: [
        { path: "amount", message: "amount must be a number" },
        { path: "items", message: "items must be valid JSON" },
      ],
    });
    expect(readArgs(argFields({ amount: 1 }), { amount: " " }).ok).toBe(false);
  });

  it("puts a response's text where the answer schema wants it", () => {
    const schema = {
      oneOf: [
        { properties: { type: { const: "accept" } } },
        { properties: { type: { const: "respond" }, text: { type: "string" } } },
      ],
    };
    expect(respondField(schema)).toBe("text");
    expect(respondField(null)).toBe("message");
    expect(decisionAnswer("respond", { text: "why?", schema })).toEqual({
      type: "respond",
      text: "why?",
    });
    expect(decisionAnswer("edit", { args: { a: 1 } })).toEqual({ type: "edit", args: { a: 1 } });
    expect(decisionAnswer("accept")).toEqual({ type: "accept" });
  });

  it("checks an answer against the schema only when there is one", () => {
    expect(checkAnswer(null, { anything: true })).toEqual([]);
    expect(checkAnswer({ type: "object", required: ["text"] }, {})).toEqual([
      { path: "text", message: "text is required" },
    ]);
  });
});
