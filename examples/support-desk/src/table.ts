/**
 * Terminal rendering of the approval queue: one row per pending interrupt with its run-tree
 * path, node, task id, sub-agent id and checkpoint id.
 */
import type { InterruptListItem } from "@rein/core";

/** A plain-text table with a header row and aligned columns. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

/** What the question asks, in a few words. */
function question(payload: unknown): string {
  if (typeof payload !== "object" || payload === null) return JSON.stringify(payload);
  const p = payload as { action?: unknown; args?: unknown };
  const text = `${String(p.action)} ${JSON.stringify(p.args)}`;
  return text.length > 72 ? `${text.slice(0, 71)}…` : text;
}

/** The pending interrupts as a table. */
export function interruptTable(items: readonly InterruptListItem[]): string {
  if (items.length === 0) return "(no pending interrupts)";
  return table(
    ["run-tree path", "node", "task id", "sub-agent id", "checkpoint id", "interrupt id", "asks"],
    items.map((i) => [
      i.path.map((p) => `${p.graph}/${p.node}`).join(" > "),
      i.node,
      i.taskId,
      i.subAgentId ?? "-",
      i.checkpointId,
      i.id,
      question(i.payload),
    ]),
  );
}
