/**
 * The queue in pages of any depth: the first page is the server's live feed; an older page is
 * read by its keyset cursor (as the API pages) and read again whenever the feed says the queue
 * changed, so every page stays live. Each page carries the total pending count.
 */
import { useEffect, useState } from "react";
import type { InterruptListItem, ReinClient } from "@rein/client";
import { describeError } from "./errors.ts";
import { useLiveQueue } from "./live.ts";

/** Server-side filters of the queue. */
export interface QueueFilters {
  graph?: string;
  subAgentGraph?: string;
  threadId?: string;
}

/** The page on screen. */
export interface QueuePages {
  items: InterruptListItem[] | null;
  /** How many pending interrupts match the filters, on all pages. */
  total: number | null;
  /** Zero-based index of the page shown, and the position of its first item. */
  page: number;
  first: number;
  hasOlder: boolean;
  older: () => void;
  newer: () => void;
  live: boolean;
  error: string | null;
  /** Bumped on every change the live feed reports. */
  version: number;
}

/** Pages through the pending interrupts matching `filters`, `size` at a time. */
export function useQueuePages(client: ReinClient, filters: QueueFilters, size: number): QueuePages {
  const feed = useLiveQueue(client, filters, size);
  const key = JSON.stringify(filters);
  // Cursors of the pages after the first, oldest last; reset when the filters change.
  const [trail, setTrail] = useState<{ key: string; cursors: string[] }>({ key, cursors: [] });
  const cursors = trail.key === key ? trail.cursors : [];
  const cursor = cursors.at(-1) ?? null;
  const [older, setOlder] = useState<{
    cursor: string;
    items: InterruptListItem[];
    total: number;
    nextCursor: string | null;
  } | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (cursor === null) return;
    let stale = false;
    client
      .listInterrupts({ ...definedOnly(filters), cursor, limit: size })
      .then((page) => {
        if (!stale) {
          setOlder({ cursor, ...page });
          setError(null);
        }
      })
      .catch((e: unknown) => !stale && setError(describeError(e)));
    return () => {
      stale = true;
    };
    // The feed's version: a change anywhere in the queue re-reads the page on screen.
  }, [client, key, cursor, size, feed.version]);

  const onOlder = cursor !== null && older?.cursor === cursor ? older : null;
  const shown = cursor === null ? feed : onOlder;
  const nextCursor = cursor === null ? feed.nextCursor : (onOlder?.nextCursor ?? null);
  return {
    items: shown?.items ?? null,
    total: shown ? shown.total : null,
    page: cursors.length,
    first: cursors.length * size,
    hasOlder: nextCursor !== null,
    older: () => {
      if (nextCursor) setTrail({ key, cursors: [...cursors, nextCursor] });
    },
    newer: () => setTrail({ key, cursors: cursors.slice(0, -1) }),
    live: feed.live,
    error: feed.error ?? error,
    version: feed.version,
  };
}

function definedOnly(filters: QueueFilters): QueueFilters {
  return Object.fromEntries(Object.entries(filters).filter(([, v]) => v));
}
