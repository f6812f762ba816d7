import { describe, expect, it } from "vitest";
import { Command, Send, isCommand, isResumeCommand, isSend } from "./command.ts";

/** An object as another copy of core would build it: its own class, the shared brand. */
function foreign(brand: string, fields: Record<string, unknown>): object {
  class Other {}
  Object.defineProperty(Other.prototype, Symbol.for(brand), { value: true });
  return Object.assign(new Other(), fields);
}

describe("command brands", () => {
  it("recognise Send and Command by brand, also from another copy of core", () => {
    expect(isSend(new Send("n", 1))).toBe(true);
    expect(isCommand(new Command({ goto: "n" }))).toBe(true);
    expect(isSend(foreign("rein.send", { kind: "send", node: "n", arg: 1 }))).toBe(true);
    expect(isCommand(foreign("rein.command", { kind: "command", goto: [] }))).toBe(true);
  });

  it("do not take look-alikes, each other, or resume commands for one another", () => {
    expect(isSend({ kind: "send", node: "n", arg: 1 })).toBe(false);
    expect(isCommand({ kind: "command", goto: [], update: {} })).toBe(false);
    expect(isSend(new Command({}))).toBe(false);
    expect(isCommand(new Send("n", 1))).toBe(false);
    expect(isCommand(Command.resume(1))).toBe(false);
    expect(isResumeCommand(new Command({}))).toBe(false);
    expect(isSend(null)).toBe(false);
  });

  it("keep the brand off the objects' own keys", () => {
    expect(Object.getOwnPropertySymbols(new Send("n", 1))).toEqual([]);
    expect(Object.getOwnPropertySymbols(new Command({}))).toEqual([]);
  });
});
