/**
 * What nodes return to steer control flow (`Command`, `Send`) and what callers pass to resume a
 * paused run (`Command.resume`, `Command.resumeMap`), and the paused run a targeted resume or a
 * steer addresses (`ResumeTarget`).
 */
import type { CheckpointId, InterruptId, RunId, TaskId } from "../ids.ts";
import type { ApprovalPrincipal } from "../types.ts";

/**
 * Brands of `Send` and `Command`, registered with `Symbol.for` so that two copies of core in one
 * process (a bundled graph module and the server's own) still recognise each other's objects,
 * where `instanceof` would see two unrelated classes. The brand sits on the prototype, so the
 * objects' own keys (and so their equality and their stored form) stay what they were.
 */
const SEND: unique symbol = Symbol.for("rein.send");
const COMMAND: unique symbol = Symbol.for("rein.command");

/** True when `value` carries `brand`, own or inherited. */
function hasBrand(value: unknown, brand: symbol): boolean {
  return typeof value === "object" && value !== null && brand in value;
}

/** Fan-out: run `node` once with `arg` as its input (map-reduce over many inputs). */
export class Send<Arg = unknown> {
  declare readonly [SEND]: true;
  readonly kind = "send" as const;
  constructor(
    readonly node: string,
    readonly arg: Arg,
  ) {}

  static {
    Object.defineProperty(this.prototype, SEND, { value: true });
  }
}

/** True for a {@link Send}, also one built by another copy of core. */
export function isSend(value: unknown): value is Send {
  return hasBrand(value, SEND);
}

/** What to do with pending child interrupts when a parent run is resumed. */
export type PendingChildrenPolicy = "keep" | "cancel" | { resolve: unknown };

/** Options that travel with an answer. */
export interface ResumeOptions {
  /** Instruction for the agent, recorded in the steering log, never merged into the answer. */
  steering?: string;
  /** Who answered (recorded in the audit log). The HTTP layer sets it from the token. */
  actor?: string;
  /**
   * Who answers, as an approval policy sees it: the subject and its groups and roles. The HTTP
   * layer passes the token's. Without one, an answer to a question with a policy is refused
   * (`NotAllowedError`, rule `no_principal`); questions without a policy do not need it.
   */
  principal?: ApprovalPrincipal;
  /** Parent resume only: what happens to child interrupts that stay pending. Default `"keep"`. */
  pendingChildren?: PendingChildrenPolicy;
  /** Deduplication id: the same id again returns the original outcome. */
  requestId?: string;
}

/**
 * An answer to pending interrupts. Built with {@link Command.resume} (one interrupt in scope) or
 * {@link Command.resumeMap} (several, by id) — two constructors so that an object answer is never
 * mistaken for a map.
 */
export type ResumeCommand =
  | {
      readonly [RESUME]: true;
      readonly kind: "resume";
      readonly value: unknown;
      readonly options: ResumeOptions;
    }
  | {
      readonly [RESUME]: true;
      readonly kind: "resumeMap";
      readonly map: Readonly<Record<string, unknown>>;
      readonly options: ResumeOptions;
    };

/** Brand of resume commands, so plain state input is never taken for one. */
const RESUME: unique symbol = Symbol.for("rein.resume");

/** Arguments of a node-returned command. */
export interface CommandInit<Update> {
  /** Node(s) or Send(s) to run next, in addition to the node's edges. */
  goto?: string | Send | readonly (string | Send)[];
  /** State update applied like a returned update. */
  update?: Update;
}

/**
 * Returned by a node to update state and choose where to go next:
 * `return new Command({ update: { n: 1 }, goto: "review" })`.
 */
export class Command<Update = Record<string, unknown>> {
  declare readonly [COMMAND]: true;
  readonly kind = "command" as const;
  readonly goto: readonly (string | Send)[];
  readonly update: Update | undefined;

  constructor(init: CommandInit<Update>) {
    const goto = init.goto;
    this.goto = goto === undefined ? [] : Array.isArray(goto) ? goto : [goto as string | Send];
    this.update = init.update;
  }

  /**
   * Answers the one pending interrupt in scope. More than one in scope is an
   * `AmbiguousResumeError`. `Command.resume()` without a value continues a static interrupt.
   *
   * @example graph.resume(RunConfig.thread("t1"), Command.resume({ approved: true }))
   */
  static {
    Object.defineProperty(this.prototype, COMMAND, { value: true });
  }

  static resume(value?: unknown, options: ResumeOptions = {}): ResumeCommand {
    return { [RESUME]: true, kind: "resume", value, options };
  }

  /** Answers several pending interrupts at once, by interrupt id. */
  static resumeMap(
    map: Readonly<Record<InterruptId | string, unknown>>,
    options: ResumeOptions = {},
  ): ResumeCommand {
    return { [RESUME]: true, kind: "resumeMap", map, options };
  }
}

/** True for a node-returned {@link Command}, also one built by another copy of core. */
export function isCommand(value: unknown): value is Command<unknown> {
  return hasBrand(value, COMMAND);
}

/** True for values built by `Command.resume` / `Command.resumeMap`. */
export function isResumeCommand(value: unknown): value is ResumeCommand {
  return hasBrand(value, RESUME);
}

/**
 * What a targeted resume or steer addresses: the pending interrupts owned by run `runId` at
 * exactly `namespace`, narrowed by `taskId` and `interruptId`.
 */
export interface ResumeTarget {
  runId: RunId | string;
  namespace: readonly string[];
  taskId?: TaskId | string;
  interruptId?: InterruptId | string;
  /** Refuse unless this checkpoint is still the head of the run's stream. */
  expectedCheckpointId?: CheckpointId | string;
}
