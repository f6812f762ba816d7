/**
 * What a node is and what it receives: the node function, its context (`ctx`), its options and
 * the routers of conditional edges. Types only, shared by the builder and the engine.
 */
import type { z } from "zod";
import type { Schema, StateOf, UpdateOf } from "../channels.ts";
import type { RunId, TaskId, ThreadId } from "../ids.ts";
import type { Approvers, EscalationTargets, SteeringRecord } from "../types.ts";
import type { Command, Send } from "./command.ts";

/** What a node may return. */
export type NodeReturn<S extends Schema> = UpdateOf<S> | Command<UpdateOf<S>> | void | undefined;

/** A node: `async (state, ctx) => update | Command | void`. Send-triggered tasks get the Send argument. */
export type NodeFn<S extends Schema, Input = StateOf<S>> = (
  input: Input,
  ctx: TaskContext<S>,
) => Promise<NodeReturn<S>> | NodeReturn<S>;

/** When and how often a failing node is retried. */
export interface RetryPolicy {
  /** Total attempts including the first. Default 3. */
  maxAttempts?: number;
  /** Wait before the first retry. Default 100 ms. */
  initialIntervalMs?: number;
  /** Multiplier between waits. Default 2. */
  backoffFactor?: number;
  /** Cap on one wait. Default 10 s. */
  maxIntervalMs?: number;
  /** Which errors are retried. Default: every error that is not a Rein error. */
  retryOn?: (error: unknown) => boolean;
}

/** Options of one node. */
export interface NodeOptions {
  retry?: RetryPolicy;
  /** Nodes this node may `goto` through a Command (used to check reachability). */
  ends?: readonly string[];
}

/** A router of a conditional edge: names the next node(s) or Sends from the state. */
export type Router<S extends Schema> = (
  state: StateOf<S>,
) =>
  string | Send | readonly (string | Send)[] | Promise<string | Send | readonly (string | Send)[]>;

/** Options of one `interrupt()` call. */
export interface InterruptOptions<Answer> {
  /**
   * Derives the interrupt id from this key instead of the call order, so concurrent calls that
   * reach `interrupt()` in another order on a re-run still get their own answers.
   */
  key?: string;
  /** Schema of the answer: a non-matching answer is refused before anything is stored. */
  answer?: z.ZodType<Answer>;
  /** Deadline: milliseconds or a duration such as `"90s"`, `"15m"`, `"3d"`. */
  timeout?: string | number;
  /** At the deadline: answer with this value, or `"cancel"` the task. Default `"cancel"`. */
  onTimeout?: Answer | "cancel";
  /**
   * Escalation ladder, first step: remind the same people (`interrupt.reminded`) after this long;
   * a list of durations for repeated reminders. Each must come before `escalate.after` and
   * `timeout` (else `InvalidLadderError`). See docs/interrupts.md.
   */
  remind?: Duration | readonly Duration[];
  /**
   * Escalation ladder, second step: after `after`, emit `interrupt.escalated` and let
   * `approvers` answer too (besides those the approval policy lists; count and `notRequester`
   * stay). Must come after every `remind` and before `timeout`.
   */
  escalate?: EscalateOption;
  /** Told who answered, when this call returns a stored answer (e.g. to record an editor). */
  onAnswer?: (info: AnswerInfo) => void;
  /**
   * Who may answer and how many must agree: a policy, a declarative rule over the payload, or a
   * pure function of the payload. Resolved now and stored with the question; the store refuses
   * an answer the policy does not allow (`NotAllowedError`). Default: the graph's
   * (`CompiledGraph.withApprovers`), else anyone who may resume.
   */
  approvers?: ApproversSpec;
}

/** Who answered an interrupt, and when. */
export interface AnswerInfo {
  interruptId: string;
  actor: string | null;
  answeredAt: string | null;
}

/** What node code sees as its second argument (`ctx`): the context of the task running it. */
export interface TaskContext<_S extends Schema = Schema> {
  readonly threadId: ThreadId;
  readonly runId: RunId;
  readonly taskId: TaskId;
  readonly node: string;
  readonly namespace: readonly string[];
  readonly step: number;
  /** Aborted when the run is cancelled. */
  readonly signal: AbortSignal;
  /** Steering instructions that target this task, its run or an ancestor run, oldest first. */
  readonly steering: readonly SteeringRecord[];
  /**
   * Pauses the run to ask a person; on resume returns the answer. Not a blocking wait: it throws,
   * the runtime records the question, and the node re-runs from its first statement on resume.
   *
   * @throws MissingCheckpointerError when the graph has no checkpointer.
   * @throws NonSerializableError when `payload` cannot be stored.
   */
  interrupt<Answer = unknown>(payload: unknown, options?: InterruptOptions<Answer>): Answer;
  /**
   * Runs `fn` until it has once returned, per (thread, task, key), and replays its stored result
   * on every re-run. Guard side effects that happen before an `interrupt()` with it.
   *
   * The guarantee is **at least once, with one stable key per attempt series; exactly once
   * against an API that dedupes on the key**: a crash (or a thrown error) between the effect and
   * storing its result runs `fn` again, with the same {@link TaskContext.idempotencyKey}. `fn`
   * receives its attempt number (1 on the first run of the series, counted durably across
   * processes), so a later attempt can look up what an earlier one did before acting again.
   *
   * @example
   * const receipt = await ctx.once("charge", (attempt) =>
   *   payments.charge({ amount, idempotencyKey: ctx.idempotencyKey("charge"), retry: attempt > 1 }),
   * );
   * @throws InvalidInputError for a key starting with U+0001 (reserved for attempt markers).
   */
  once<T>(key: string, fn: (attempt: number) => Promise<T> | T): Promise<T>;
  /** A stable key for (thread, task, key), to hand to an external API as its idempotency key. */
  idempotencyKey(key: string): string;
  /** Emits a `custom` stream event. */
  emit(data: unknown): void;
}

/** @deprecated use {@link TaskContext} (the same type, named for what it is: one task's context). */
export type NodeContext<S extends Schema = Schema> = TaskContext<S>;

/** A test of one number (or value) in the payload, found by a dotted `path` (`"args.amount"`). */
export interface ApproverCondition {
  path: string;
  gt?: number;
  gte?: number;
  lt?: number;
  lte?: number;
  /** Equal (as JSON) to this value. */
  eq?: unknown;
}

/**
 * A declarative rule: when the condition holds (or without one), `then` is the policy (`null`:
 * none). In a list, the first rule whose condition holds decides; none holding means no policy.
 *
 * @example { when: { path: "amount", gt: 1000 }, then: { groups: ["finance"], count: 2 } }
 */
export interface ApproverRule {
  when?: ApproverCondition;
  then: Approvers | null;
}

/**
 * How a question declares its approvers: a policy, a rule, a list of rules, or a pure function
 * of the payload returning the policy (`undefined` or `null`: none).
 */
export type ApproversSpec<Payload = unknown> =
  | Approvers
  | ApproverRule
  | readonly ApproverRule[]
  | ((payload: Payload) => Approvers | null | undefined);

/** A duration: milliseconds or a string such as `"90s"`, `"15m"`, `"3d"`. */
export type Duration = string | number;

/** The escalation step of a ladder: after `after`, `approvers` may answer too. */
export interface EscalateOption {
  /** When, counted from the question being raised. */
  after: Duration;
  /** Principals who may answer from then on, besides those the approval policy lists. */
  approvers: EscalationTargets;
}
