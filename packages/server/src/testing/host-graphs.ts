/**
 * The graph the multi-host tests run (`--graphs` of their processes): a long step, then a charge
 * behind `ctx.once` that the ledger file `REIN_TEST_LEDGER` records with the host that made it
 * (`REIN_TEST_HOST`) and when — so a test counts lost and doubled charges, and charges a host
 * made after its lease ran out.
 */
import { appendFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { END, START, StateGraph, append, lastValue, type Checkpointer } from "@rein/core";
import type { GraphFactory } from "../registry.ts";

/** A guarded charge after `ms` of work (stopped early when the run is cancelled or fenced). */
function guarded(store: Checkpointer) {
  const ttl = Number(process.env["REIN_LEASE_TTL_MS"]);
  return new StateGraph({ ms: lastValue<number>(() => 0), charged: append<string>() })
    .addNode("charge", async (s, ctx) => {
      if (s.ms > 0) await sleep(s.ms, undefined, { signal: ctx.signal }).catch(() => undefined);
      if (ctx.signal.aborted) return {};
      const host = process.env["REIN_TEST_HOST"] ?? "local";
      await ctx.once("charge", () => {
        const file = process.env["REIN_TEST_LEDGER"];
        const line = { threadId: String(ctx.threadId), host, at: Date.now() };
        if (file) appendFileSync(file, `${JSON.stringify(line)}\n`);
        return host;
      });
      return { charged: host };
    })
    .addEdge(START, "charge")
    .addEdge("charge", END)
    .compile({
      checkpointer: store,
      name: "guarded",
      ...(Number.isFinite(ttl) && ttl > 0 ? { lease: { ttlMs: ttl } } : {}),
    });
}

/** The graphs by name, as a `--graphs` module exports them. */
export const graphs: Record<string, GraphFactory> = { guarded };
