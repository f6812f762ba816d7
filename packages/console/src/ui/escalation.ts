/**
 * The escalation ladder of a question as the queue shows it: a badge once a reminder or the
 * escalation has happened, and who the escalation let answer.
 */
import type { EscalationTargets, InterruptEscalation } from "@rein/client";

/** `groups managers, subject maria`: who an escalation admits. */
export function targetsText(targets: EscalationTargets | null): string {
  if (!targets) return "nobody";
  const parts = [
    ...(targets.subjects ?? []).map((s) => `subject ${s}`),
    ...(targets.groups ?? []).map((g) => `group ${g}`),
    ...(targets.roles ?? []).map((r) => `role ${r}`),
  ];
  return parts.length > 0 ? parts.join(", ") : "nobody";
}

/** The badge of a ladder that has taken a step (`null` before the first step). */
export function escalationBadge(
  escalation: InterruptEscalation | undefined,
): { text: string; title: string } | null {
  if (!escalation || escalation.stage === "none") return null;
  if (escalation.stage === "reminded")
    return {
      text: "reminded",
      title: "Nobody has answered yet: the people who may were reminded.",
    };
  return {
    text: "escalated",
    title: `Escalated: ${targetsText(escalation.escalatedTo)} may answer it now too.`,
  };
}
