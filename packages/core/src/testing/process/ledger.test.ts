import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Ledger } from "./ledger.ts";

const dir = mkdtempSync(join(tmpdir(), "rein-ledger-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("Ledger", () => {
  it("reads back appended records in order and filters them by fields", () => {
    const ledger = new Ledger(join(dir, "a.ledger"));
    expect(ledger.read()).toEqual([]);
    ledger.append({ thread: "t1", label: "charge", key: "k1" });
    ledger.append({ thread: "t2", label: "charge", key: "k2" });
    ledger.append({ thread: "t1", label: "refund", key: "k3" });
    expect(ledger.read().map((e) => e.key)).toEqual(["k1", "k2", "k3"]);
    expect(ledger.where({ thread: "t1", label: "charge" })).toEqual([
      { thread: "t1", label: "charge", key: "k1" },
    ]);
  });

  it("skips a last line torn by a writer killed mid-write", () => {
    const ledger = new Ledger(join(dir, "b.ledger"));
    ledger.append({ key: "whole" });
    appendFileSync(ledger.path, '{"key":"to');
    expect(ledger.read()).toEqual([{ key: "whole" }]);
  });
});
