/**
 * The CLI commands that talk to a server through `@rein/client`: threads, start, interrupts,
 * resume, steer, state, history, runs.
 */
import {
  ReinApiError,
  ReinClient,
  type InterruptListItem,
  type RunResult,
  type Target,
  type Thread,
} from "@rein/client";
import { age, summary, table, withSpinner, type Io } from "./output.ts";
import { UsageError } from "./serve.ts";

/** Flags every client command takes. */
export interface ClientFlags {
  url: string;
  token?: string | undefined;
  json: boolean;
}

/** The client for the flags. */
export function clientOf(flags: ClientFlags): ReinClient {
  return new ReinClient({ baseUrl: flags.url, ...(flags.token ? { token: flags.token } : {}) });
}

function parseJson(flag: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError(`--${flag} must be JSON (got ${summary(text, 40)}).`);
  }
}

function printResult(io: Io, flags: ClientFlags, result: RunResult): void {
  if (flags.json) return io.out(`${JSON.stringify(result, null, 2)}\n`);
  io.out(`run ${result.runId} ${result.status}\n`);
  if (result.error) io.out(`error: ${result.error.message}\n`);
  if (result.interrupts.length > 0) {
    io.out("waiting on:\n");
    io.out(
      table(
        ["INTERRUPT", "NAMESPACE", "NODE", "PAYLOAD"],
        result.interrupts.map((i) => [
          i.id,
          i.namespace.join("/") || "-",
          i.node,
          summary(i.payload),
        ]),
      ),
    );
    // A result carries the oldest page only; older stored results have no count.
    const more = (result.pendingCount ?? result.interrupts.length) - result.interrupts.length;
    if (more > 0)
      io.out(`… and ${more} more pending (rein interrupts --thread ${result.threadId})
`);
  }
}

/** `rein threads`. */
export async function threadsCommand(io: Io, flags: ClientFlags, limit?: number): Promise<void> {
  const page = await clientOf(flags).listThreads(limit ? { limit } : {});
  if (flags.json) return io.out(`${JSON.stringify(page, null, 2)}\n`);
  io.out(
    table(
      ["THREAD", "GRAPH", "STATUS", "PENDING", "UPDATED"],
      page.items.map((t) => [
        t.threadId,
        t.graph,
        t.status,
        String(t.pendingInterrupts.length),
        t.updatedAt,
      ]),
    ),
  );
}

/** `rein start GRAPH [--thread ID] [--input JSON]`: a new thread and its first run (waits). */
export async function startCommand(
  io: Io,
  flags: ClientFlags,
  graph: string,
  options: { thread?: string | undefined; input?: string | undefined },
): Promise<void> {
  const rein = clientOf(flags);
  const input = options.input ? parseJson("input", options.input) : {};
  if (typeof input !== "object" || input === null || Array.isArray(input))
    throw new UsageError("--input must be a JSON object of channel updates.");
  const thread = await rein.createThread({
    graph,
    ...(options.thread ? { threadId: options.thread } : {}),
  });
  if (!flags.json) io.out(`thread ${thread.threadId}\n`);
  const result = await withSpinner(
    io,
    "running",
    rein.startRun(thread.threadId, { input: input as Record<string, unknown>, wait: true }),
  );
  printResult(io, flags, result);
}

/** `rein interrupts`: the approval queue. */
export async function interruptsCommand(
  io: Io,
  flags: ClientFlags,
  query: {
    graph?: string;
    threadId?: string;
    status?: InterruptListItem["status"];
    limit?: number;
    cursor?: string;
  },
): Promise<void> {
  const page = await clientOf(flags).listInterrupts(query);
  if (flags.json) return io.out(`${JSON.stringify(page, null, 2)}\n`);
  io.out(
    table(
      ["INTERRUPT", "THREAD", "PATH", "NODE", "AGE", "PAYLOAD"],
      page.items.map((i) => [
        i.id,
        i.threadId,
        i.path.map((p) => p.graph).join(" > ") || i.graph,
        i.node,
        age(i.ageMs),
        summary(i.payload, 50),
      ]),
    ),
  );
  if (page.nextCursor) io.out(`more: --cursor ${page.nextCursor}\n`);
}

/** Options of `rein resume`. */
export interface ResumeFlags {
  interrupt?: string | undefined;
  run?: string | undefined;
  namespace?: string | undefined;
  value?: string | undefined;
  map?: string | undefined;
  steering?: string | undefined;
  expect?: string | undefined;
  key?: string | undefined;
  cancelChildren: boolean;
}

async function targetOf(
  rein: ReinClient,
  threadId: string,
  flags: {
    interrupt?: string | undefined;
    run?: string | undefined;
    namespace?: string | undefined;
  },
): Promise<Target | undefined> {
  if (flags.run)
    return {
      runId: flags.run,
      namespace: flags.namespace ? flags.namespace.split("/") : [],
      ...(flags.interrupt ? { interruptId: flags.interrupt } : {}),
    };
  if (!flags.interrupt) return undefined;
  const thread = await rein.getThread(threadId);
  const found = thread.pendingInterrupts.find((i) => i.id === flags.interrupt);
  if (!found) throw notPending(thread, flags.interrupt);
  return { runId: found.runId, namespace: found.namespace, interruptId: found.id };
}

/**
 * The conflict of an `--interrupt` that is not pending (answered, cancelled, superseded, or never
 * asked): a stale target, with the thread's latest metadata as the server would give it. Nothing
 * was sent.
 */
function notPending(thread: Thread, interruptId: string): ReinApiError {
  const reason = `Interrupt ${interruptId} is not pending on thread ${thread.threadId}.`;
  return new ReinApiError(409, {
    error: "stale_target",
    message: `${reason} Nothing was sent; re-read the pending interrupts and decide again.`,
    details: {
      threadId: thread.threadId,
      runId: thread.runId,
      threadStatus: thread.status,
      headCheckpointId: thread.headCheckpointId,
      pendingInterrupts: thread.pendingInterrupts,
      reason,
    },
  });
}

/** `rein resume THREAD`: answers and continues. */
export async function resumeCommand(
  io: Io,
  flags: ClientFlags,
  threadId: string,
  options: ResumeFlags,
): Promise<void> {
  if ((options.value === undefined) === (options.map === undefined))
    throw new UsageError(
      "Pass exactly one of --value JSON (one interrupt) and --map JSON ({ id: value }).",
    );
  const rein = clientOf(flags);
  const target = await targetOf(rein, threadId, options);
  const answer =
    options.value !== undefined
      ? { resume: parseJson("value", options.value) }
      : { resumeMap: parseJson("map", options.map as string) as Record<string, unknown> };
  const result = await withSpinner(
    io,
    "resuming",
    rein.resume(
      threadId,
      {
        ...answer,
        ...(target ? { target } : {}),
        ...(options.steering ? { steering: options.steering } : {}),
        ...(options.expect ? { expectedCheckpointId: options.expect } : {}),
        ...(options.cancelChildren ? { pendingChildren: "cancel" as const } : {}),
      },
      options.key ? { idempotencyKey: options.key } : {},
    ),
  );
  printResult(io, flags, result);
}

/** `rein steer THREAD TEXT`. */
export async function steerCommand(
  io: Io,
  flags: ClientFlags,
  threadId: string,
  text: string,
  options: {
    interrupt?: string | undefined;
    run?: string | undefined;
    namespace?: string | undefined;
  },
): Promise<void> {
  const rein = clientOf(flags);
  const target = await targetOf(rein, threadId, options);
  const record = await rein.steer(threadId, { text, ...(target ? { target } : {}) });
  if (flags.json) return io.out(`${JSON.stringify(record, null, 2)}\n`);
  io.out(`steering ${record.id} recorded for run ${record.runId} by ${record.actor}\n`);
}

/** `rein state THREAD`. */
export async function stateCommand(
  io: Io,
  flags: ClientFlags,
  threadId: string,
  subgraphs: boolean,
): Promise<void> {
  const state = await clientOf(flags).getState(threadId, { subgraphs });
  if (flags.json) return io.out(`${JSON.stringify(state, null, 2)}\n`);
  io.out(
    `checkpoint ${state.checkpointId ?? "-"}  step ${state.step}  next: ${state.next.join(", ") || "-"}\n`,
  );
  io.out(`values:\n${JSON.stringify(state.values, null, 2)}\n`);
  if (state.interrupts.length > 0)
    io.out(
      `pending:\n${table(
        ["INTERRUPT", "NAMESPACE", "NODE", "PAYLOAD"],
        state.interrupts.map((i) => [
          i.id,
          i.namespace.join("/") || "-",
          i.node,
          summary(i.payload),
        ]),
      )}`,
    );
}

/** `rein history THREAD`. */
export async function historyCommand(
  io: Io,
  flags: ClientFlags,
  threadId: string,
  limit?: number,
): Promise<void> {
  const history = await clientOf(flags).getHistory(threadId, limit ? { limit } : {});
  if (flags.json) return io.out(`${JSON.stringify(history, null, 2)}\n`);
  io.out(
    table(
      ["CHECKPOINT", "STEP", "SOURCE", "NEXT", "PENDING"],
      history.items.map((s) => [
        s.checkpointId ?? "-",
        String(s.step),
        s.source ?? "-",
        s.next.join(",") || "-",
        String(s.interrupts.length),
      ]),
    ),
  );
}

/** `rein runs THREAD [RUN]`: the runs of a thread, or one run's tree. */
export async function runsCommand(
  io: Io,
  flags: ClientFlags,
  threadId: string,
  runId?: string,
): Promise<void> {
  const rein = clientOf(flags);
  if (runId) {
    const tree = await rein.getRun(threadId, runId);
    if (flags.json) return io.out(`${JSON.stringify(tree, null, 2)}\n`);
    const lines: string[] = [];
    const walk = (node: typeof tree, depth: number): void => {
      lines.push(`${"  ".repeat(depth)}${node.graph} ${node.runId} ${node.status}`);
      for (const child of node.children) walk(child, depth + 1);
    };
    walk(tree, 0);
    return io.out(`${lines.join("\n")}\n`);
  }
  const runs = await rein.listRuns(threadId);
  if (flags.json) return io.out(`${JSON.stringify(runs, null, 2)}\n`);
  io.out(
    table(
      ["RUN", "GRAPH", "NAMESPACE", "STATUS", "PARENT"],
      runs.items.map((r) => [
        r.runId,
        r.graph,
        r.namespace.join("/") || "-",
        r.status,
        r.parentRunId ?? "-",
      ]),
    ),
  );
}
