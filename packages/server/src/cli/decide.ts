/**
 * `rein decide`: one decision applied to many interrupts at once (`POST /interrupts/decisions`),
 * by ids or by a filter with the count the caller expects. All or nothing, like the route.
 */
import {
  BulkRefusedApiError,
  type ReinApiError,
  type DecisionSelection,
  type DecisionsRequest,
} from "@rein/client";
import { clientOf, type ClientFlags } from "./commands.ts";
import { summary, table, withSpinner, type Io } from "./output.ts";
import { UsageError } from "./serve.ts";

/** Options of `rein decide`. */
export interface DecideFlags {
  /** Comma-separated interrupt ids. */
  ids?: string | undefined;
  graph?: string | undefined;
  subAgent?: string | undefined;
  thread?: string | undefined;
  /** With a filter: how many pending interrupts it must match now. */
  expect?: string | undefined;
  accept: boolean;
  reject: boolean;
  /** Any other answer, as JSON. */
  value?: string | undefined;
  steering?: string | undefined;
  key?: string | undefined;
}

/** The decision of the flags: exactly one of `--accept`, `--reject`, `--value JSON`. */
function decisionOf(flags: DecideFlags): unknown {
  const given = [flags.accept, flags.reject, flags.value !== undefined].filter(Boolean).length;
  if (given !== 1) throw new UsageError("Pass exactly one of --accept, --reject and --value JSON.");
  // The decision convention of the prebuilt tool node: ignore is its rejection.
  if (flags.accept) return { type: "accept" };
  if (flags.reject) return { type: "ignore" };
  try {
    return JSON.parse(flags.value as string) as unknown;
  } catch {
    throw new UsageError(`--value must be JSON (got ${summary(flags.value, 40)}).`);
  }
}

/** The interrupts of the flags: `--ids`, or a filter with `--expect N`. */
function selectionOf(flags: DecideFlags): DecisionSelection {
  const filtered = flags.graph ?? flags.subAgent ?? flags.thread;
  if (flags.ids !== undefined) {
    if (filtered !== undefined || flags.expect !== undefined)
      throw new UsageError(
        "Pass either --ids or a filter (--graph, --sub-agent, --thread), not both.",
      );
    const ids = flags.ids
      .split(",")
      .map((id) => id.trim())
      .filter(Boolean);
    if (ids.length === 0) throw new UsageError("--ids needs at least one interrupt id.");
    return { ids };
  }
  if (filtered === undefined)
    throw new UsageError("Name the interrupts: --ids a,b,c or a filter with --expect N.");
  const expected = Number(flags.expect);
  if (flags.expect === undefined || !Number.isInteger(expected) || expected < 1)
    throw new UsageError(
      "A filter needs --expect N: how many pending interrupts you expect it to match (rein interrupts shows them).",
    );
  return {
    filter: {
      status: "pending",
      ...(flags.graph ? { graph: flags.graph } : {}),
      ...(flags.subAgent ? { subAgentGraph: flags.subAgent } : {}),
      ...(flags.thread ? { threadId: flags.thread } : {}),
    },
    expectedCount: expected,
  };
}

/** `rein decide (--ids a,b | --graph G [--sub-agent S] [--thread T] --expect N) (--accept | --reject | --value JSON)`. */
export async function decideCommand(
  io: Io,
  flags: ClientFlags,
  options: DecideFlags,
): Promise<void> {
  const request: DecisionsRequest = {
    ...selectionOf(options),
    resume: decisionOf(options),
    ...(options.steering ? { steering: options.steering } : {}),
  };
  const result = await withSpinner(
    io,
    "deciding",
    clientOf(flags).decide(request, options.key ? { idempotencyKey: options.key } : {}),
  );
  if (flags.json) return io.out(`${JSON.stringify(result, null, 2)}\n`);
  const partial = result.decided.filter((d) => d.status === "approval_recorded").length;
  io.out(
    `decided ${result.count} interrupt${result.count === 1 ? "" : "s"}` +
      (partial > 0 ? ` (${partial} still wait for more approvals)` : "") +
      "\n",
  );
  io.out(
    table(
      ["INTERRUPT", "THREAD", "STATUS"],
      result.decided.map((d) => [d.interruptId, d.threadId, d.status.replace("_", " ")]),
    ),
  );
}

/**
 * The lines a refused bulk decision prints for people: each refused interrupt and why (the
 * 409 `bulk_refused`), or the expected and actual counts (409 `count_mismatch`); null for any
 * other error.
 */
export function bulkRefusalLines(error: ReinApiError): string | null {
  if (error instanceof BulkRefusedApiError)
    return `nothing was decided; refused:\n${table(
      ["INTERRUPT", "CODE", "WHY"],
      error.refused.map((r) => [r.interruptId, r.code, r.message]),
    )}`.trimEnd();
  if (error.code === "count_mismatch")
    return `nothing was decided: expected ${String(error.details["expected"])}, the filter matches ${String(error.details["actual"])} now`;
  return null;
}
