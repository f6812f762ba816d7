/**
 * Hash routes, so the server only serves one `index.html` and a reload keeps the screen:
 * `#/` the queue, `#/threads/:id`, `#/threads/:id/interrupts/:interruptId`, `#/webhooks` and
 * `#/webhooks/:subscriptionId` (its delivery log).
 */
import { useEffect, useState } from "react";

/** A screen and its ids. */
export type Route =
  | { screen: "queue" }
  | { screen: "thread"; threadId: string }
  | { screen: "decision"; threadId: string; interruptId: string }
  | { screen: "webhooks"; subscriptionId: string | null };

/** The route of a hash. */
export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "threads" && parts[1]) {
    if (parts[2] === "interrupts" && parts[3])
      return { screen: "decision", threadId: parts[1], interruptId: parts[3] };
    return { screen: "thread", threadId: parts[1] };
  }
  if (parts[0] === "webhooks") return { screen: "webhooks", subscriptionId: parts[1] ?? null };
  return { screen: "queue" };
}

/** The hash of a route. */
export function href(route: Route): string {
  const e = encodeURIComponent;
  if (route.screen === "thread") return `#/threads/${e(route.threadId)}`;
  if (route.screen === "decision")
    return `#/threads/${e(route.threadId)}/interrupts/${e(route.interruptId)}`;
  if (route.screen === "webhooks")
    return route.subscriptionId ? `#/webhooks/${e(route.subscriptionId)}` : "#/webhooks";
  return "#/";
}

/** The current route, following hash changes. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const update = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener("hashchange", update);
    return () => window.removeEventListener("hashchange", update);
  }, []);
  return route;
}

/** Goes to a route. */
export function navigate(route: Route): void {
  window.location.hash = href(route);
}
