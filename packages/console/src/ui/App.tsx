/**
 * The console shell: sign-in first, then a header naming who is signed in and the screen of the
 * current route.
 */
import { useEffect, useState } from "react";
import { describeError } from "./errors.ts";
import { href, useRoute } from "./router.ts";
import { Decision } from "./screens/Decision.tsx";
import { Queue } from "./screens/Queue.tsx";
import { SignIn } from "./screens/SignIn.tsx";
import { ThreadScreen } from "./screens/Thread.tsx";
import { WebhooksScreen, canManageWebhooks } from "./screens/Webhooks.tsx";
import { openSession, rememberedToken, signIn, signOut, type Session } from "./session.ts";

/** The whole console. */
export function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session | null>(null);
  const [restoring, setRestoring] = useState(true);
  const [restoreError, setRestoreError] = useState<string | null>(null);

  useEffect(() => {
    const token = rememberedToken();
    // No token yet: a server in open mode lets anyone in, so there is no sign-in screen to show.
    (token === null ? openSession() : signIn(token))
      .then(setSession)
      .catch((error: unknown) => {
        signOut();
        setRestoreError(describeError(error));
      })
      .finally(() => setRestoring(false));
  }, []);

  if (restoring) return <p className="loading">Signing in…</p>;
  if (!session) return <SignIn onSignedIn={setSession} initialError={restoreError} />;

  const titles = { queue: "Queue", thread: "Thread", decision: "Decision", webhooks: "Webhooks" };
  const title = titles[route.screen];
  return (
    <>
      <header className="bar">
        <a className="brand" href={href({ screen: "queue" })}>
          Rein console
        </a>
        <nav aria-label="Main">
          <a
            href={href({ screen: "queue" })}
            aria-current={route.screen === "queue" ? "page" : undefined}
          >
            Queue
          </a>
          {canManageWebhooks(session) && (
            <a
              href={href({ screen: "webhooks", subscriptionId: null })}
              aria-current={route.screen === "webhooks" ? "page" : undefined}
            >
              Webhooks
            </a>
          )}
        </nav>
        <p className="who" aria-label="Signed in as">
          <span>{session.me.subject}</span>
          <span className="tenant">tenant {session.me.tenant ?? "all (open mode)"}</span>
        </p>
        {!session.open ? (
          <button
            type="button"
            onClick={() => {
              signOut();
              setSession(null);
            }}
          >
            Sign out
          </button>
        ) : null}
      </header>
      <main aria-label={title}>
        {route.screen === "queue" && <Queue session={session} />}
        {route.screen === "thread" && (
          <ThreadScreen key={route.threadId} session={session} threadId={route.threadId} />
        )}
        {route.screen === "decision" && (
          <Decision
            key={`${route.threadId}/${route.interruptId}`}
            session={session}
            threadId={route.threadId}
            interruptId={route.interruptId}
          />
        )}
        {route.screen === "webhooks" && (
          <WebhooksScreen session={session} subscriptionId={route.subscriptionId} />
        )}
      </main>
    </>
  );
}
