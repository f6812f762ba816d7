/**
 * How queue items read to a person: the run-tree path, a one-line payload summary, ages and
 * deadlines in words.
 */
import type { InterruptListItem } from "@rein/client";
import { asDecision } from "./decision.ts";

/** `orchestrator › sub-agent › node`: the root graph, then the node at each level. */
export function treePath(item: {
  path: readonly Pick<InterruptListItem["path"][number], "graph" | "node">[];
  graph: string;
  node: string;
}): string {
  const [root] = item.path;
  if (!root) return `${item.graph} › ${item.node}`;
  return [root.graph, ...item.path.map((entry) => entry.node)].join(" › ");
}

const clip = (text: string, max: number): string =>
  text.length > max ? `${text.slice(0, max - 1)}…` : text;

/** `issue_refund` → `Issue refund`: an action name in words. */
export function humanize(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/[_-]+/g, " ")
    .trim()
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const ISO_CURRENCY = /^[A-Z]{3}$/;

/**
 * An argument's value as a person reads it: a number with its unit (an ISO 4217 code formats as
 * money, `$120.00`), grouped digits, strings as they are, the rest as compact JSON.
 */
export function formatValue(value: unknown, unit?: string): string {
  if (typeof value === "number") {
    if (unit && ISO_CURRENCY.test(unit))
      return new Intl.NumberFormat("en-US", { style: "currency", currency: unit }).format(value);
    const n = new Intl.NumberFormat("en-US").format(value);
    return unit ? `${n} ${unit}` : n;
  }
  if (typeof value === "string") return value;
  return JSON.stringify(value) ?? "—";
}

/** A whole number with grouped digits: `10,000`. */
export function count(n: number): string {
  return new Intl.NumberFormat("en-US").format(n);
}

/**
 * The queue's range line: `101–200 of 10,000 pending` for the page whose first question is
 * number `first + 1` (zero-based `first`) and that holds `shown`; empty while the total is not
 * known yet.
 */
export function pageRange(first: number, shown: number, total: number | null): string {
  if (total === null) return "";
  if (total === 0) return "0 pending";
  return `${count(first + 1)}–${count(first + shown)} of ${count(total)} pending`;
}

/** The arguments a row leads with: money first, then who it is about, then the rest. */
export function keyArgs(
  args: Record<string, unknown>,
  units: Record<string, string>,
  max = 3,
): { name: string; text: string }[] {
  const rank = (name: string): number => {
    if (units[name] && ISO_CURRENCY.test(units[name])) return 0;
    if (/^(to|customer|email|user|account|recipient)/i.test(name)) return 1;
    if (/id$/i.test(name)) return 2;
    return 3;
  };
  return Object.keys(args)
    .filter((name) => typeof args[name] !== "object" || args[name] === null)
    .sort((a, b) => rank(a) - rank(b))
    .slice(0, max)
    .map((name) => ({ name, text: clip(formatValue(args[name], units[name]), 40) }));
}

/** One line saying what the interrupt asks. */
export function payloadSummary(payload: unknown, max = 100): string {
  const decision = asDecision(payload);
  if (decision) {
    const args = keyArgs(decision.args, decision.units)
      .map((a) => `${a.name} ${a.text}`)
      .join(", ");
    return clip(`${humanize(decision.action)}${args ? `: ${args}` : ""}`, max);
  }
  if (typeof payload === "string") return clip(payload, max);
  if (typeof payload === "object" && payload !== null) {
    const record = payload as Record<string, unknown>;
    for (const key of ["question", "message", "description", "prompt"]) {
      const value = record[key];
      if (typeof value === "string") return clip(value, max);
    }
  }
  return clip(JSON.stringify(payload) ?? "(no payload)", max);
}

/** `42 s`, `5 min`, `3 h`, `2 d`. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.round(min / 60);
  if (h < 48) return `${h} h`;
  return `${Math.round(h / 24)} d`;
}

/** A deadline relative to now: `in 5 min`, `5 min ago`, or `none`. */
export function deadlineText(deadline: string | null, now = Date.now()): string {
  if (!deadline) return "none";
  const left = Date.parse(deadline) - now;
  return left >= 0 ? `in ${duration(left)}` : `${duration(-left)} ago`;
}

/** A short form of a long id, for tables; the full id goes in a `title`. */
export function shortId(id: string | null | undefined, keep = 8): string {
  if (!id) return "—";
  return id.length > keep + 1 ? `${id.slice(0, keep)}…` : id;
}

/** Kinds the queue filter offers. */
export const KINDS = ["decision", "question", "before", "after"] as const;

/** The kind of an interrupt as the filter offers it. */
export type QueueKind = (typeof KINDS)[number];

/**
 * `decision` (the payload follows the convention), `question` (any other `interrupt()`), or the
 * static pause `before` / `after` a node.
 */
export function kindOf(item: Pick<InterruptListItem, "kind" | "payload">): QueueKind {
  if (asDecision(item.payload)) return "decision";
  return item.kind === "dynamic" ? "question" : item.kind;
}
