/**
 * The live approval queue: `watchInterrupts` (the server's SSE feed) as React state, reconnecting
 * after a dropped connection.
 */
import { useEffect, useState } from "react";
import type { InterruptListItem, ReinClient } from "@rein/client";
import { describeError } from "./errors.ts";

/** What the live feed has delivered so far. */
export interface LiveQueue {
  items: InterruptListItem[] | null;
  /** How many match the filters on all pages. */
  total: number | null;
  /** Cursor of the page after this one. */
  nextCursor: string | null;
  /** True while the feed is connected. */
  live: boolean;
  error: string | null;
  /** Bumped on every page received (screens re-read related data on it). */
  version: number;
}

/** Subscribes to the first `limit` pending interrupts matching the filters. */
export function useLiveQueue(
  client: ReinClient,
  filters: { graph?: string; subAgentGraph?: string; threadId?: string },
  limit = 200,
  /** False: no connection (a screen that is handed its parent's feed; browsers allow few). */
  enabled = true,
): LiveQueue {
  const [state, setState] = useState<LiveQueue>({
    items: null,
    total: null,
    nextCursor: null,
    live: false,
    error: null,
    version: 0,
  });
  const { graph, subAgentGraph, threadId } = filters;
  useEffect(() => {
    if (!enabled) return;
    const controller = new AbortController();
    let retry: ReturnType<typeof setTimeout> | undefined;
    const connect = async (): Promise<void> => {
      try {
        for await (const page of client.watchInterrupts(
          {
            ...(graph ? { graph } : {}),
            ...(subAgentGraph ? { subAgentGraph } : {}),
            ...(threadId ? { threadId } : {}),
            limit,
          },
          { signal: controller.signal },
        ))
          setState((s) => ({
            items: page.items,
            total: page.total,
            nextCursor: page.nextCursor,
            live: true,
            error: null,
            version: s.version + 1,
          }));
      } catch (error) {
        if (controller.signal.aborted) return;
        setState((s) => ({ ...s, live: false, error: describeError(error) }));
      }
      if (controller.signal.aborted) return;
      setState((s) => ({ ...s, live: false }));
      retry = setTimeout(() => void connect(), 2000);
    };
    void connect();
    return () => {
      controller.abort();
      clearTimeout(retry);
    };
  }, [client, graph, subAgentGraph, threadId, limit, enabled]);
  return state;
}

/** The current time, ticking every `ms`, for ages and deadlines. */
export function useNow(ms = 5000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}
