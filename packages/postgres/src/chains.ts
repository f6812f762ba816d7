/**
 * Channel values of the Postgres store: every wanted chain fetched as an index range in one
 * statement (the version's depth says how many links), with a link-by-link fallback for a chain
 * a forked stream interleaved with another branch.
 */
import type pg from "pg";
import { chainFromRange, chainLengthOfVersion } from "@rein/core/store";
import type { ChainRow, RowCodec } from "./codec.ts";
import { checked, guarded } from "./connection.ts";
import type { Statements } from "./statements.ts";

/** A row of the chain range query: one link, with the version it has. */
export type ChainRange = ChainRow & { version: string };

/** The channel, version and chain length arrays of the range query for `versions`. */
export function chainRangeArrays(versions: Record<string, string>): [string[], string[], number[]] {
  const wanted = Object.entries(versions);
  return [
    wanted.map(([channel]) => channel),
    wanted.map(([, version]) => version),
    wanted.map(([, version]) => chainLengthOfVersion(version)),
  ];
}

/**
 * The values of `versions` in the stream, delta chains rebuilt; from `read` when the range query
 * was made already (only a forked chain is then read again).
 *
 * @throws {NotFoundError} when a version, or a link of its chain, was never stored.
 */
export async function channelValues(
  pool: pg.Pool,
  sql: Statements,
  codec: RowCodec,
  [threadId, stream]: [string, string],
  versions: Record<string, string>,
  read?: ChainRange[],
): Promise<Record<string, unknown>> {
  const wanted = Object.entries(versions);
  if (wanted.length === 0) return {};
  const rows = <Row extends pg.QueryResultRow>(
    statement: Statements["readChains"],
    values: unknown[],
  ) => guarded(async () => (await pool.query<Row>(checked(statement, values))).rows);
  const ranges =
    read ??
    (await rows<ChainRange>(sql.chainRanges, [threadId, stream, ...chainRangeArrays(versions)]));
  const links: ChainRow[] = [];
  const forked: [string, string][] = [];
  for (const [channel, version] of wanted) {
    const chain = chainFromRange(
      version,
      ranges.filter((row) => row.channel === channel),
    );
    if (chain) links.push(...chain);
    else forked.push([channel, version]);
  }
  if (forked.length > 0) {
    const values = [threadId, stream, forked.map(([c]) => c), forked.map(([, v]) => v)];
    links.push(...(await rows<ChainRow>(sql.readChains, values)));
  }
  return codec.channelValues(wanted, links);
}
