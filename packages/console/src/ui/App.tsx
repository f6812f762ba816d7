/**
 * The console shell: sign-in first (finishing a single sign-on when the identity provider sends
 * the reviewer back), then a header naming who is signed in and the screen of the current route.
 */
import { useEffect, useState } from "react";
import { describeError } from "./errors.ts";
import { href, useRoute, type Route } from "./router.ts";
import { Decision } from "./screens/Decision.tsx";
import { Queue } from "./screens/Queue.tsx";
import { SignIn } from "./screens/SignIn.tsx";
import { ThreadScreen } from "./screens/Thread.tsx";
import { WebhooksScreen, canManageWebhooks } from "./screens/Webhooks.tsx";
import {
  clientFor,
  openSession,
  rememberedToken,
  signIn,
  signOut,
  ssoSignIn,
  type Session,
} from "./session.ts";
import { SsoError, completeSignIn, isSignInCallback, type OidcSettings } from "./sso.ts";

/** The identity provider the server names for the console, or null (tokens file, open mode). */
async function oidcSettings(): Promise<OidcSettings | null> {
  return (await clientFor("").authSettings()).oidc;
}

/**
 * The session this page load starts with: the one the identity provider just sent back, the token
 * this tab remembers, or open mode's; null when the reviewer has to sign in.
 */
async function restore(settings: Promise<OidcSettings | null>): Promise<Session | null> {
  if (isSignInCallback()) {
    const oidc = await settings;
    if (!oidc)
      throw new SsoError(
        "This server no longer signs in with an identity provider. Sign in again.",
      );
    return ssoSignIn(await completeSignIn(oidc));
  }
  const token = rememberedToken();
  // No token yet: a server in open mode lets anyone in, so there is no sign-in screen to show.
  return token === null ? openSession() : signIn(token);
}

/** The whole console. */
export function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session | null>(null);
  const [restoring, setRestoring] = useState(true);
  const [restoreError, setRestoreError] = useState<string | null>(null);
  const [oidc, setOidc] = useState<OidcSettings | null>(null);

  useEffect(() => {
    // Asked once, without a token: whether the sign-in screen offers single sign-on.
    const settings = oidcSettings().catch(() => null);
    void settings.then(setOidc);
    restore(settings)
      .then(setSession)
      .catch((error: unknown) => {
        signOut();
        setRestoreError(describeError(error));
      })
      .finally(() => setRestoring(false));
  }, []);

  // A single sign-on that expires without a refresh asks to sign in again.
  useEffect(
    () =>
      session?.sso?.onEnd(() => {
        setSession(null);
        setRestoreError("Your sign-in expired. Sign in again to continue.");
      }),
    [session],
  );

  if (restoring) return <p className="loading">Signing in…</p>;
  if (!session) return <SignIn onSignedIn={setSession} initialError={restoreError} oidc={oidc} />;

  const title = TITLES[route.screen];
  return (
    <>
      <Header
        session={session}
        route={route}
        onSignOut={() => {
          const sso = session.sso;
          signOut();
          setSession(null);
          // Single sign-on: forget the tokens, then end the provider's session too.
          void sso?.signOut().then((url) => {
            if (url) window.location.assign(url);
          });
        }}
      />
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

const TITLES = { queue: "Queue", thread: "Thread", decision: "Decision", webhooks: "Webhooks" };

/** The bar above every screen: navigation, who is signed in, and sign-out. */
function Header({
  session,
  route,
  onSignOut,
}: {
  session: Session;
  route: Route;
  onSignOut: () => void;
}) {
  return (
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
        {session.sso ? (
          <>
            <span title={session.me.subject}>
              {session.sso.identity.name ?? session.sso.identity.email ?? session.me.subject}
            </span>
            {session.sso.identity.name && session.sso.identity.email ? (
              <span className="email">{session.sso.identity.email}</span>
            ) : null}
          </>
        ) : (
          <span>{session.me.subject}</span>
        )}
        <span className="tenant">tenant {session.me.tenant ?? "all (open mode)"}</span>
      </p>
      {!session.open ? (
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      ) : null}
    </header>
  );
}
