/**
 * The queue screen's state that is not data: the selected question (by id, and by place so
 * answering one moves on to the next), the questions checked for a bulk decision, the keys that
 * move and act on the selection, and whether the screen is wide enough for the split view.
 */
import { useEffect, useState, useSyncExternalStore } from "react";
import type { InterruptListItem } from "@rein/client";
import { navigate } from "./router.ts";

const WIDE = "(min-width: 1100px)";

/** True on a screen wide enough to show the selected question beside the list. */
export function useWide(): boolean {
  return useSyncExternalStore(
    (onChange) => {
      const query = window.matchMedia(WIDE);
      query.addEventListener("change", onChange);
      return () => query.removeEventListener("change", onChange);
    },
    () => window.matchMedia(WIDE).matches,
  );
}

/** The selection within `items`: the selected question, its place, and a way to move it. */
export interface QueueSelection {
  index: number;
  current: InterruptListItem | undefined;
  select: (at: number) => void;
}

/**
 * The selected question: it stays selected while it is on the page; once it leaves (answered),
 * the one now in its place is.
 */
export function useSelection(items: InterruptListItem[]): QueueSelection {
  const [selected, setSelected] = useState<{ id: string | null; at: number }>({ id: null, at: 0 });
  const found = items.findIndex((i) => i.id === selected.id);
  const index = found >= 0 ? found : Math.max(0, Math.min(selected.at, items.length - 1));
  const select = (at: number) => {
    const item = items[at];
    if (item) setSelected({ id: item.id, at });
  };
  const current = items[index];
  useEffect(() => {
    document.getElementById(`row-${current?.id ?? ""}`)?.scrollIntoView({ block: "nearest" });
  }, [current?.id]);
  return { index, current, select };
}

/** The questions checked for a bulk decision, by id. */
export interface Checked {
  has: (id: string) => boolean;
  /** Checks (`on`) or unchecks the questions `ids`. */
  check: (ids: string[], on: boolean) => void;
  clear: () => void;
}

/** The checked questions: a question that leaves the live page leaves the selection. */
export function useChecked(): Checked {
  const [checked, setChecked] = useState<ReadonlySet<string>>(new Set());
  return {
    has: (id) => checked.has(id),
    check: (ids, on) =>
      setChecked((was) => {
        const next = new Set(was);
        for (const id of ids) {
          if (on) next.add(id);
          else next.delete(id);
        }
        return next;
      }),
    clear: () => setChecked(new Set()),
  };
}

const typing = (target: EventTarget | null): boolean =>
  target instanceof HTMLElement &&
  (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));

/**
 * The queue's keys: j/k move (list and pane together), Enter opens, x checks, a accepts. Keys
 * typed into a field, or with a modifier, are the field's and the browser's.
 */
export function useQueueKeys(
  count: number,
  selection: QueueSelection,
  checked: Checked,
  accept: (item: InterruptListItem) => void,
): void {
  const { index, current, select } = selection;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (typing(event.target) || event.metaKey || event.ctrlKey || event.altKey) return;
      const move = (by: number) =>
        select(Math.min(Math.max(index + by, 0), Math.max(count - 1, 0)));
      if (event.key === "j") move(1);
      else if (event.key === "k") move(-1);
      else if (event.key === "Enter" && current && !(event.target instanceof HTMLAnchorElement))
        navigate({ screen: "decision", threadId: current.threadId, interruptId: current.id });
      else if (event.key === "a" && current) accept(current);
      else if (event.key === "x" && current) checked.check([current.id], !checked.has(current.id));
      else return;
      event.preventDefault();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  });
}
