/**
 * The signed-in session: the token, who it is, and the one `ReinClient` every screen talks to the
 * server through. A token pasted on the sign-in form is kept in sessionStorage (it dies with the
 * tab); a single sign-on session keeps its tokens in memory only (see sso.ts).
 */
import { ReinClient, type Whoami } from "@rein/client";
import type { SsoSession } from "./sso.ts";

const KEY = "rein.console.token";

/** A signed-in reviewer. */
export interface Session {
  client: ReinClient;
  me: Whoami;
  /** The server needs no token: there is nothing to sign out of. */
  open: boolean;
  /** Signed in with the identity provider: the tokens and who the ID token names. */
  sso?: SsoSession;
}

/** A client of the server that served this page. */
export function clientFor(token: string): ReinClient {
  return new ReinClient({ baseUrl: window.location.origin, token });
}

/** Checks the token with the server and remembers it for this tab. */
export async function signIn(token: string): Promise<Session> {
  const client = clientFor(token);
  const me = await client.whoami();
  window.sessionStorage.setItem(KEY, token);
  return { client, me, open: false };
}

/** Checks the single sign-on session's access token with the server. */
export async function ssoSignIn(sso: SsoSession): Promise<Session> {
  const client = new ReinClient({ baseUrl: window.location.origin, fetch: sso.fetch });
  return { client, me: await client.whoami(), open: false, sso };
}

/**
 * The session of a server in open mode, without a sign-in screen; null when the server asks for
 * a token (asked through `/healthz`, so a token server is not sent a request it must refuse).
 */
export async function openSession(): Promise<Session | null> {
  const client = clientFor("");
  if ((await client.health()).auth !== "open") return null;
  return { client, me: await client.whoami(), open: true };
}

/** The remembered token of this tab, if any. */
export function rememberedToken(): string | null {
  return window.sessionStorage.getItem(KEY);
}

/** Forgets the token. */
export function signOut(): void {
  window.sessionStorage.removeItem(KEY);
}
