/**
 * Sign-in: with the identity provider (single sign-on) when the server names one, and with a
 * bearer token, checked with the server before anything else is shown.
 */
import { useState, type FormEvent } from "react";
import { ReinApiError } from "@rein/client";
import { describeError } from "../errors.ts";
import { signIn, type Session } from "../session.ts";
import { startSignIn, type OidcSettings } from "../sso.ts";

/** The sign-in form. */
export function SignIn(props: {
  onSignedIn: (session: Session) => void;
  initialError: string | null;
  /** The server's identity provider for the console, if it has one. */
  oidc: OidcSettings | null;
}) {
  const [token, setToken] = useState("");
  const [error, setError] = useState<string | null>(props.initialError);
  const [busy, setBusy] = useState(false);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    // An empty token signs in only to a server in open mode (local use); others answer 401.
    signIn(token.trim())
      .then(props.onSignedIn)
      .catch((e: unknown) =>
        setError(
          !token.trim() && e instanceof ReinApiError && e.status === 401
            ? "Enter the access token you were given."
            : describeError(e),
        ),
      )
      .finally(() => setBusy(false));
  };

  const single = () => {
    setBusy(true);
    setError(null);
    // On success the page leaves for the provider; it comes back with a code (App redeems it).
    startSignIn(props.oidc!).catch((e: unknown) => {
      setError(describeError(e));
      setBusy(false);
    });
  };

  const { oidc } = props;
  return (
    <main className="signin" aria-label="Sign in">
      <h1>Rein console</h1>
      {oidc ? (
        <>
          <p>
            Answer and steer paused agents. Sign in with your organization&apos;s identity provider
            (<span className="issuer">{oidc.issuer}</span>).
          </p>
          <button type="button" className="sso" onClick={single} disabled={busy}>
            Sign in with single sign-on
          </button>
          <p>Or, with an access token you were given:</p>
        </>
      ) : (
        <p>
          Answer and steer paused agents. Sign in with your access token (leave it empty for a
          server in open mode).
        </p>
      )}
      <form onSubmit={submit} noValidate>
        <label htmlFor="token">Access token</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="current-password"
          value={token}
          onChange={(e) => setToken(e.target.value)}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? "signin-error" : undefined}
        />
        <button type="submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
        {error && (
          <p id="signin-error" role="alert" className="error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}
