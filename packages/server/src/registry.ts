/**
 * The graphs a server runs, by name. A graph module exports `graphs`: name → factory that compiles
 * the graph against the server's store. A thread belongs to one graph, recorded when the thread is
 * created, in the thread's `graph` column (or read from its first run when core created it).
 */
import {
  InvalidInputError,
  NotFoundError,
  type ApproversSpec,
  type Checkpointer,
  type CompiledGraph,
  type LeaseSettings,
  type Schema,
  type ThreadRecord,
} from "@rein/core";
import type { ThreadHistoryStore } from "@rein/core/store";
import { importModule } from "./load-module.ts";

/** A compiled graph of any state shape. */
export type ServedGraph = CompiledGraph<Schema>;

/** Compiles a graph against the server's store. */
export type GraphFactory = (store: Checkpointer) => ServedGraph;

/**
 * What a `--graphs` module exports: its graphs, and optionally a close hook — a `close()`
 * function, or a default export with `close()` or `[Symbol.asyncDispose]()` — that `rein serve`
 * and `rein worker` await once on shutdown, after their runs have drained and before the store
 * closes. Use it for what the graphs opened and the process must not outlive (an MCP server's
 * child process, a client's sockets).
 */
export interface GraphModule {
  graphs: Record<string, GraphFactory>;
  close?: () => void | Promise<void>;
}

/** A close hook of a graph module: resolves once what the module opened is closed. */
export type GraphModuleClose = () => Promise<void>;

/** The no-wait form of each graph, made once per graph object. */
const noWaitForms = new WeakMap<ServedGraph, ServedGraph>();

/**
 * `graph` with a lease that does not wait for a busy thread: taking the thread's lease is tried
 * once, and a thread another call (of this process or another) holds is refused at once with
 * `ThreadBusyError`. What starts new input uses it (new input never waits behind a running run,
 * it is `thread_busy`), and so do the background executors (a busy thread is somebody else's
 * turn).
 */
export function withoutLeaseWait(graph: ServedGraph): ServedGraph {
  let quick = noWaitForms.get(graph);
  if (!quick) noWaitForms.set(graph, (quick = graph.withLease({ waitMs: 0 })));
  return quick;
}

/** Graphs by name, compiled against one store. */
export class GraphRegistry {
  private readonly byName: Map<string, ServedGraph>;

  /**
   * @param lease lease timing for every graph (the deployment's one lease setting); default:
   *   each graph's own, as compiled.
   * @param policies default approvers per graph name (`--policies`), for the questions a graph
   *   raises without approvers of their own.
   * @throws InvalidInputError when a policy names a graph that is not served.
   */
  constructor(
    store: Checkpointer,
    factories: Record<string, GraphFactory>,
    lease?: Partial<LeaseSettings>,
    policies: Record<string, ApproversSpec> = {},
  ) {
    const unknown = Object.keys(policies).filter((name) => !(name in factories));
    if (unknown.length > 0)
      throw new InvalidInputError(
        `Approval policies name graphs this server does not run: ${unknown.join(", ")} (it runs ${Object.keys(factories).join(", ")}).`,
        { graphs: unknown },
      );
    this.byName = new Map(
      Object.entries(factories).map(([name, make]) => {
        let graph = make(store);
        // Unnamed, the graph would show as graph-<hash> in the queue and the console; the key
        // it is served under is the name its users know it by.
        if (graph.hasDefaultName) graph = graph.withName(name);
        if (lease) graph = graph.withLease(lease);
        const policy = Object.hasOwn(policies, name) ? policies[name] : undefined;
        return [name, policy ? graph.withApprovers(policy) : graph];
      }),
    );
  }

  /** Registered names. */
  names(): string[] {
    return [...this.byName.keys()];
  }

  /** All graphs. */
  all(): ServedGraph[] {
    return [...this.byName.values()];
  }

  /** @throws InvalidInputError when no graph has this name. */
  get(name: string): ServedGraph {
    const graph = this.byName.get(name);
    if (!graph)
      throw new InvalidInputError(
        `No graph named "${name}" is registered; this server runs: ${this.names().join(", ") || "(none)"}.`,
        { graph: name, graphs: this.names() },
      );
    return graph;
  }

  /** Name of the graph a thread belongs to, or null when it cannot be told. */
  static async graphNameOf(
    store: ThreadHistoryStore,
    thread: ThreadRecord,
  ): Promise<string | null> {
    if (thread.graph !== undefined) return thread.graph;
    const runs = await store.listRuns(thread.threadId);
    return runs.find((r) => r.parentRunId === null)?.graph ?? null;
  }

  /**
   * The graph that runs a thread.
   *
   * @throws NotFoundError when the thread's graph is not registered on this server.
   */
  async forThread(store: ThreadHistoryStore, thread: ThreadRecord): Promise<ServedGraph> {
    const name = await GraphRegistry.graphNameOf(store, thread);
    const graph = name === null ? undefined : this.byName.get(name);
    if (!graph) throw new NotFoundError(`graph of thread ${thread.threadId}:`, name ?? "(unknown)");
    return graph;
  }
}

/**
 * Imports a graph module (a path or a package name; TypeScript or JavaScript) and checks its
 * shape.
 *
 * @throws InvalidInputError when the module is missing or fails to load (one line naming the
 *   module and the cause), or does not export `graphs` as an object of functions.
 */
export async function loadGraphModule(specifier: string): Promise<Record<string, GraphFactory>> {
  const mod = (await importModule(specifier)) as Partial<GraphModule> & {
    default?: Partial<GraphModule>;
  };
  const graphs = mod.graphs ?? mod.default?.graphs;
  if (
    !graphs ||
    typeof graphs !== "object" ||
    !Object.values(graphs).every((f) => typeof f === "function")
  )
    throw new InvalidInputError(
      `${specifier} must export \`graphs\`: { [name]: (store) => compiledGraph }.`,
      { module: specifier },
    );
  return graphs;
}

/** `Symbol.asyncDispose` where the runtime has it. */
const asyncDispose = (Symbol as { asyncDispose?: symbol }).asyncDispose;

/** The callable hook of a value, when it has one: its `close()` or its `[Symbol.asyncDispose]()`. */
function hookOf(value: unknown): (() => unknown) | null {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return null;
  const record = value as Record<string | symbol, unknown>;
  for (const key of ["close", ...(asyncDispose ? [asyncDispose] : [])]) {
    const hook = record[key];
    if (typeof hook === "function") return () => (hook as () => unknown).call(value);
  }
  return null;
}

/**
 * The close hook of a graph module ({@link GraphModule}), or null when it exports none: its
 * `close` export, else its default export's `close()` or `[Symbol.asyncDispose]()`. The module is
 * the one {@link loadGraphModule} loaded (imports are cached).
 */
export async function graphModuleClose(specifier: string): Promise<GraphModuleClose | null> {
  const mod = (await importModule(specifier)) as { close?: unknown; default?: unknown };
  const hook =
    typeof mod.close === "function" ? () => (mod.close as () => unknown)() : hookOf(mod.default);
  return hook ? async () => void (await hook()) : null;
}
