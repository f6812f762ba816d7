/**
 * Sign-in: a bearer token, checked with the server before anything else is shown.
 */
import { useState, type FormEvent } from "react";
import { ReinApiError } from "@rein/client";
import { describeError } from "../errors.ts";
import { signIn, type Session } from "../session.ts";

/** The sign-in form. */
export function SignIn(props: {
  onSignedIn: (session: Session) => void;
  initialError: string | null;
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

  return (
    <main className="signin" aria-label="Sign in">
      <h1>Rein console</h1>
      <p>
        Answer and steer paused agents. Sign in with your access token (leave it empty for a server
        in open mode).
      </p>
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
