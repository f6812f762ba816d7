/**
 * A server refuses at start, in one line, a feature whose capability its store does not declare;
 * a store that declares what the turned-on features need is served.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MemorySaver, MissingCapabilityError, type RuntimeStore } from "@rein/core";
import { runtimeOnly } from "@rein/core/testing";
import { openAuth } from "./auth.ts";
import { createServer, type ReinServer } from "./app.ts";

/** The memory store seen through the runtime members plus `capabilities`' members. */
function storeWith(capabilities: RuntimeStore["capabilities"]): RuntimeStore {
  const full = new MemorySaver();
  const view = runtimeOnly(full) as unknown as Record<string, unknown>;
  const members: Record<string, readonly string[]> = {
    threadCatalog: ["putThread", "getThread", "listThreads", "deleteThread"],
    threadHistory: ["listCheckpoints", "listRuns"],
    interruptQueue: ["getInterrupt", "listInterrupts"],
    deadlineTimer: ["listExpiredInterrupts"],
    runRecovery: ["listRunsByStatus"],
    steering: ["appendSteering", "listSteering"],
    leaseStatus: ["getLease"],
    sideRecords: ["getSideRecord", "putSideRecord"],
    auditChain: ["listAudit", "listAuditChain", "verifyAudit"],
  };
  for (const capability of Object.keys(capabilities))
    for (const member of members[capability] ?? [])
      view[member] = (Reflect.get(full, member) as () => unknown).bind(full);
  return { ...(view as unknown as RuntimeStore), capabilities };
}

/** What the API's always-on routes and background work need: every capability the map above lists. */
const API_CAPABILITIES: RuntimeStore["capabilities"] = {
  threadCatalog: true,
  threadHistory: true,
  interruptQueue: true,
  deadlineTimer: true,
  runRecovery: true,
  steering: true,
  leaseStatus: true,
  sideRecords: true,
  auditChain: true,
};

const open: ReinServer[] = [];
afterEach(async () => {
  for (const server of open.splice(0)) await server.close();
});

describe("store capabilities at start", () => {
  it("a runtime-only store with webhooks on is refused with one line naming the capability", async () => {
    const start = createServer({
      store: runtimeOnly(new MemorySaver()),
      graphs: {},
      auth: openAuth(),
    });
    const error: unknown = await start.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(MissingCapabilityError);
    const message = (error as Error).message;
    expect(message.split("\n")).toHaveLength(1);
    expect(message).toContain('"webhookOutbox"');
  });

  it("a store with the API's capabilities but no webhook outbox is refused when webhooks are on", async () => {
    const store = storeWith(API_CAPABILITIES);
    const error: unknown = await createServer({ store, graphs: {}, auth: openAuth() }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(MissingCapabilityError);
    expect((error as MissingCapabilityError).details).toEqual({
      capability: "webhookOutbox",
      feature: "webhooks and notifications",
    });
    expect((error as Error).message.split("\n")).toHaveLength(1);
  });

  it("the same store is served with webhook delivery off, and has no /webhooks routes", async () => {
    const store = storeWith(API_CAPABILITIES);
    const server = await createServer({
      store,
      graphs: {},
      auth: openAuth(),
      webhookDelivery: false,
      metrics: false,
    });
    open.push(server);
    const url = await server.listen({});
    expect((await fetch(`${url}/threads`)).status).toBe(200);
    expect((await fetch(`${url}/webhooks`)).status).toBe(404);
  });
});
