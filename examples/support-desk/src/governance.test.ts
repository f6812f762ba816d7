/**
 * The demo's four-eyes refund: a refund over $1,000 needs two approvers from `finance`, and the
 * person who started the run may not approve it; a small refund is decided by anyone.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { NotAllowedError } from "@rein/core";
import { Command, type ApprovalPrincipal } from "@rein/core";
import { SqliteSaver } from "@rein/sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { closeMailServers } from "./agents.ts";
import { DeskFiles, largeTicket } from "./desk-data.ts";
import { createSupportDesk } from "./support-desk.ts";

const scratch = mkdtempSync(join(tmpdir(), "rein-desk-governance-"));
afterAll(async () => {
  await closeMailServers();
  rmSync(scratch, { recursive: true, force: true });
});

/** The principals of the demo's tokens file. */
const tokens = (
  JSON.parse(readFileSync(new URL("../tokens.json", import.meta.url), "utf8")) as {
    tokens: { subject: string; groups?: string[]; scopes: string[] }[];
  }
).tokens;
const principal = (subject: string): ApprovalPrincipal => {
  const entry = tokens.find((t) => t.subject === subject);
  if (!entry) throw new Error(`no token for ${subject}`);
  return { subject, groups: entry.groups ?? [] };
};

describe("the support desk's four-eyes refund", () => {
  it("a $1,450 refund: 1 of 2 after alice, the requester and alice again refused, paid once on bob's", async () => {
    const dataDir = join(scratch, "four-eyes");
    const store = SqliteSaver.open(join(dataDir, "desk.db"));
    try {
      const graph = createSupportDesk({ store, dataDir });
      const threadId = "ticket-2077";
      await graph.invoke({ ticket: largeTicket }, { threadId, actor: "rita" });
      await graph.resume(
        { threadId },
        Command.resume({ type: "accept" }, { actor: "rita", principal: principal("rita") }),
      );
      const pending = await graph.listInterrupts({ threadId, status: "pending" });
      const refund = pending.items.find((i) => i.graph === "refund_agent");
      if (!refund) throw new Error("no refund question");
      expect(refund.payload).toMatchObject({ args: { orderId: "2077", amount: 1450 } });
      expect(refund.approval?.policy).toMatchObject({ groups: ["finance"], count: 2 });
      const accept = (who: string) =>
        graph.resumeTargeted(
          { runId: refund.runId, namespace: refund.namespace, interruptId: refund.id },
          Command.resume({ type: "accept" }, { actor: who, principal: principal(who) }),
        );
      const own = await accept("rita").catch((e: unknown) => e);
      expect((own as NotAllowedError).details.rule).toBe("requester");
      await accept("alice");
      const after = await store.getInterrupt(refund.id);
      expect(after?.status).toBe("pending");
      expect(after?.approvals?.approvals.map((a) => a.actor)).toEqual(["alice"]);
      const again = await accept("alice").catch((e: unknown) => e);
      expect((again as NotAllowedError).details.rule).toBe("already_approved");
      const reviewer = await accept("riley").catch((e: unknown) => e);
      expect((reviewer as NotAllowedError).details.rule).toBe("not_listed");
      expect(new DeskFiles(dataDir).ledger(threadId)).toEqual([]);
      await accept("bob");
      expect((await store.getInterrupt(refund.id))?.answeredBy).toBe("bob");
      expect(new DeskFiles(dataDir).ledger(threadId).map((e) => e.amount)).toEqual([1450]);
    } finally {
      await store.close();
    }
  }, 60_000);
});
