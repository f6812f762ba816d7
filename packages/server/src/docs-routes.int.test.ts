/**
 * `docs/server.md` against the running server, on SQLite and on Postgres: every route the
 * OpenAPI document describes has a row in the route table, and the table's `interrupt`
 * multitask row says what happens to the step in flight (it is discarded, not finished).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  client,
  postgresBackend,
  serveOn,
  sqliteBackend,
  type Backend,
} from "./testing/harness.ts";

const DOC = readFileSync(join(import.meta.dirname, "../../../docs/server.md"), "utf8");
const METHODS = ["get", "post", "put", "patch", "delete"] as const;

/** The `METHOD /path` cells of the route table (`:id` style parameters). */
function documentedRoutes(): Set<string> {
  const rows = DOC.split("\n").filter((line) => /^\| `(GET|POST|PUT|PATCH|DELETE) \//.test(line));
  return new Set(rows.map((row) => /^\| `([^`]+)`/.exec(row)?.[1] ?? ""));
}

function suite(backend: Backend): void {
  describe.skipIf(!backend.available)(`docs/server.md against ${backend.name}`, () => {
    const app = serveOn(backend);

    it("the route table lists every route of the OpenAPI document", async () => {
      const doc = await client(app.url, null)<{ paths: Record<string, object> }>(
        "GET",
        "/openapi.json",
      );
      expect(doc.status).toBe(200);
      const served = Object.entries(doc.body.paths).flatMap(([path, item]) =>
        METHODS.filter((m) => m in item).map(
          (m) => `${m.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ":$1")}`,
        ),
      );
      expect(served).toContain("GET /whoami");
      const documented = documentedRoutes();
      expect(served.filter((route) => !documented.has(route))).toEqual([]);
    });
  });
}

describe("docs/server.md's multitask policies", () => {
  it("says the interrupt policy discards the step in flight, not that it waits for its end", () => {
    const row = DOC.split("\n").find((line) => line.trim().startsWith("| `interrupt`"));
    expect(row).toBeDefined();
    expect(row).not.toContain("next step boundary");
    expect(row).toContain("step in flight");
    expect(row).toContain("not undone");
  });
});

suite(sqliteBackend);
suite(await postgresBackend());
