/**
 * Test helpers for the Postgres store: where the test server is, whether it answers, and fresh
 * throwaway schemas.
 *
 * Tests run against a real server (`REIN_TEST_POSTGRES_URL`, default
 * `postgres://postgres@127.0.0.1:5432/test`). When it cannot be reached the Postgres suites are
 * skipped with a printed reason, unless `REIN_REQUIRE_POSTGRES=1` (set it in CI): then the test
 * file fails, so a missing database can never pass as green.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { PostgresSaver } from "./saver.ts";

/** The server tests use when `REIN_TEST_POSTGRES_URL` is not set. */
export const DEFAULT_TEST_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/test";

/** The URL of the test server. */
export function postgresTestUrl(): string {
  return process.env["REIN_TEST_POSTGRES_URL"] || DEFAULT_TEST_POSTGRES_URL;
}

/** True when `REIN_REQUIRE_POSTGRES=1`: an unreachable server fails the tests. */
export function postgresRequired(): boolean {
  return process.env["REIN_REQUIRE_POSTGRES"] === "1";
}

/** Whether the test server answered, and why not. */
export interface PostgresProbe {
  url: string;
  available: boolean;
  /** Why it is unavailable (the connection error), or null. */
  reason: string | null;
}

/** The URL with its password masked, for messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(unparsable URL)";
  }
}

/**
 * Checks that the test server answers `SELECT 1` within a few seconds. When it does not, prints
 * why (`console.warn`, naming the URL and the error) and returns `available: false`.
 *
 * @throws {Error} when the server is unreachable and {@link postgresRequired} is true.
 */
export async function probePostgres(url = postgresTestUrl()): Promise<PostgresProbe> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return { url, available: true, reason: null };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const message = `PostgreSQL at ${redactUrl(url)} is unreachable (${reason})`;
    if (postgresRequired()) throw new Error(`${message}, and REIN_REQUIRE_POSTGRES=1.`);
    console.warn(
      `${message}: skipping the Postgres tests. Set REIN_TEST_POSTGRES_URL to run them.`,
    );
    return { url, available: false, reason };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A fresh schema name, `rein_test_<random>`. */
export function testSchemaName(): string {
  return `rein_test_${randomBytes(6).toString("hex")}`;
}

/** A migrated saver on a fresh schema of the test server. */
export async function createTestSaver(url = postgresTestUrl()): Promise<PostgresSaver> {
  return PostgresSaver.connect({ connectionString: url, schema: testSchemaName() });
}

/** Drops the saver's schema and closes it. */
export async function destroyTestSaver(saver: PostgresSaver): Promise<void> {
  try {
    await saver.pool.query(`DROP SCHEMA IF EXISTS "${saver.schema}" CASCADE`);
  } finally {
    await saver.close();
  }
}

/**
 * Savers that stand for processes sharing one database: each with a pool of its own, all on one
 * fresh schema. `close()` (a test's `afterEach`) drops the schema and closes them.
 */
export class SharedSchemaSavers {
  private readonly savers: PostgresSaver[] = [];
  private schema = "";

  constructor(private readonly url = postgresTestUrl()) {}

  /** `count` set-up savers on a fresh schema. */
  async open(count: number): Promise<PostgresSaver[]> {
    this.schema = testSchemaName();
    const made = Array.from(
      { length: count },
      () => new PostgresSaver({ connectionString: this.url, schema: this.schema }),
    );
    this.savers.push(...made);
    for (const saver of made) await saver.setup();
    return made;
  }

  /** Drops the schema and closes every saver opened. */
  async close(): Promise<void> {
    await this.savers[0]?.pool.query(`DROP SCHEMA IF EXISTS "${this.schema}" CASCADE`);
    await Promise.all(this.savers.splice(0).map((s) => s.close()));
  }
}

export {
  ThrowawayCluster,
  clusterUnavailableReason,
  freePort,
  freePortIn,
  type ClusterOptions,
} from "./cluster.ts";
export { ThrowawayBouncer, bouncerConfig, bouncerUnavailableReason } from "./bouncer.ts";
