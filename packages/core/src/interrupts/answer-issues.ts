/**
 * Readable schema issues for a refused answer. Answer schemas are often unions (a decision is
 * accept | edit | respond | ignore); a union failure alone says only "Invalid input", so the
 * issues of the branch the answer came closest to matching are reported instead, with paths.
 */
import type { z } from "zod";

/** One issue of a refused answer: where, and what is wrong. */
export interface AnswerIssue {
  path: (string | number)[];
  message: string;
}

type Issue = z.core.$ZodIssue;

/** The issues of the union branch that matched furthest (deepest first failure). */
function closestBranch(branches: readonly (readonly Issue[])[]): readonly Issue[] {
  let best: readonly Issue[] = branches[0] ?? [];
  let bestDepth = -1;
  for (const branch of branches) {
    const depth = Math.min(...branch.map((i) => i.path.length));
    if (depth > bestDepth) {
      best = branch;
      bestDepth = depth;
    }
  }
  return best;
}

/** Flattens zod issues, descending into union failures, with full paths. */
export function answerIssues(issues: readonly Issue[], prefix: PropertyKey[] = []): AnswerIssue[] {
  const out: AnswerIssue[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === "invalid_union" && issue.errors.length > 0)
      out.push(...answerIssues(closestBranch(issue.errors), path));
    else
      out.push({
        path: path.map((p) => (typeof p === "number" ? p : String(p))),
        message: issue.message,
      });
  }
  return out;
}

/** `args.amount: expected number, received string; ...` */
export function describeIssues(issues: readonly AnswerIssue[]): string {
  return issues
    .map((i) => (i.path.length > 0 ? `${i.path.join(".")}: ${i.message}` : i.message))
    .join("; ");
}
