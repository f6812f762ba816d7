/**
 * Readiness (`GET /readyz`): whether this server should take traffic now, as a load balancer or
 * Kubernetes asks it. Liveness (`/healthz`) only says the process serves; readiness makes a round
 * trip to the store, checks its migrations are applied (when whoever opened it says how to read
 * its schema version), on Postgres that the LISTEN connection
 * (the events of runs executing elsewhere) is up, and that the server is not shutting down.
 */
import { ROOT_STREAM, type RuntimeStore } from "@rein/core";
import type { Readiness } from "@rein/wire";
import { threadIdOf } from "./ids.ts";
import type { ScaleOut } from "./scale/index.ts";

/** One check's outcome. */
type Check = Readiness["checks"][number];

/** How long the store's round trip may take before the server counts as not ready. */
const STORE_TIMEOUT_MS = 2_000;

/** A thread id no thread has: reading it is a round trip that finds nothing. */
const PROBE_THREAD = threadIdOf("rein-readiness-probe");

/**
 * The schema version a store holds and the one this build needs: what whoever opened the store
 * knows of it (`openStore` gives it for SQLite and Postgres), so readiness never asks which
 * class a store is.
 */
export interface SchemaStatus {
  /** The version the store's schema is at now (one round trip). */
  have(): Promise<number>;
  /** The version this build's migrations reach. */
  need: number;
}

/** The versions, read through `schema`, or (without one) a plain round trip to the store. */
async function versions(
  store: RuntimeStore,
  schema: SchemaStatus | null,
): Promise<{ have: number; need: number } | null> {
  if (schema) return { have: await schema.have(), need: schema.need };
  await store.getThreadHead(PROBE_THREAD, ROOT_STREAM);
  return null;
}

/** `work`, or a rejection once `ms` have passed. */
async function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The store and migration checks: one round trip. */
async function storeChecks(store: RuntimeStore, schema: SchemaStatus | null): Promise<Check[]> {
  let found: { have: number; need: number } | null;
  try {
    found = await within(versions(store, schema), STORE_TIMEOUT_MS);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return [
      { name: "store", ok: false, detail: `the store does not answer: ${message.slice(0, 300)}` },
    ];
  }
  const store_: Check = { name: "store", ok: true, detail: "answers" };
  if (found === null) return [store_];
  const { have, need } = found;
  return [
    store_,
    have >= need
      ? { name: "migrations", ok: true, detail: `schema version ${have}` }
      : {
          name: "migrations",
          ok: false,
          detail: `schema version ${have}, this server needs ${need}: migrations are not applied`,
        },
  ];
}

/** What the readiness of one server depends on. */
export interface ReadinessSources {
  /** The store: a round trip to it when no schema status is given. */
  store: RuntimeStore;
  /** Its schema version and the one needed; null: only the round trip is checked. */
  schema: SchemaStatus | null;
  scale: ScaleOut | null;
  /** Whether the server is shutting down. */
  closing: () => boolean;
}

/** Runs the checks; ready when every one holds. */
export async function readiness(sources: ReadinessSources): Promise<Readiness> {
  const checks: Check[] = [];
  if (sources.closing())
    checks.push({ name: "shutdown", ok: false, detail: "the server is shutting down" });
  checks.push(...(await storeChecks(sources.store, sources.schema)));
  // A process that does not listen (a pooled URL and no direct one) is ready without it.
  if (sources.scale?.fanout.listens)
    checks.push(
      sources.scale.fanout.listening
        ? { name: "listener", ok: true, detail: "LISTEN connection open" }
        : {
            name: "listener",
            ok: false,
            detail:
              "the LISTEN connection is down (reconnecting): events of runs on other processes would not reach this server",
          },
    );
  const failed = checks.find((c) => !c.ok);
  return { ready: failed === undefined, reason: failed?.detail ?? null, checks };
}
