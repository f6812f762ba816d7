/**
 * `npm start -- --notify-demo`: the local stand-ins for a team's webhook endpoint and mail
 * server, in the demo's own process. A webhook receiver (verifies each request with
 * `standardwebhooks` and prints it) and an SMTP server (`smtp-server`, prints each message's
 * subject and links, keeps the last ones for `GET /demo/mail` on the receiver's port), plus the
 * notifier config that points `rein serve --notify` at them, with one person per demo token.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname } from "node:path";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";
import { Webhook, WebhookVerificationError } from "standardwebhooks";

/** One message the demo's SMTP server accepted. */
export interface DemoMail {
  at: string;
  to: string[];
  subject: string;
  /** The decision links and the console link found in the text. */
  links: string[];
  text: string;
}

/** A token of the demo's tokens file. */
interface DemoToken {
  token: string;
  subject: string;
  tenant?: string;
  scopes: string[];
  groups?: string[];
  roles?: string[];
}

/** How many messages `GET /demo/mail` keeps. */
const KEEP = 50;

/** The address the demo gives a person: `<subject>@support-desk.test`. */
export function demoAddress(subject: string): string {
  return `${subject.replace(/[^A-Za-z0-9._-]/g, "_")}@support-desk.test`;
}

/** The tokens of a tokens file (`{ tokens: [...] }` or the bare array). */
export function readTokens(file: string): DemoToken[] {
  const parsed = JSON.parse(readFileSync(file, "utf8")) as { tokens: DemoToken[] } | DemoToken[];
  return Array.isArray(parsed) ? parsed : parsed.tokens;
}

function escape(text: string): string {
  return text.replace(
    /[&<>"]/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c] ?? c,
  );
}

/** The running stand-ins. */
export interface NotifyDemo {
  /** `http://127.0.0.1:<port>/demo/hook`: subscribe this. */
  hookUrl: string;
  /** `http://127.0.0.1:<port>/demo/mail`: the last messages. */
  mailUrl: string;
  /** `smtp://127.0.0.1:<port>`. */
  smtpUrl: string;
  /** The messages received, newest last. */
  mails: DemoMail[];
  /** Webhooks verified so far. */
  hooks: { id: string; type: string; threadId: string }[];
  /** Sets the secret webhooks are verified with (known once the subscription is made). */
  setSecret(secret: string): void;
  close(): Promise<void>;
}

/** Starts the receiver and the SMTP server on free loopback ports; `print` gets each line. */
export async function startNotifyDemo(print: (line: string) => void): Promise<NotifyDemo> {
  const mails: DemoMail[] = [];
  const hooks: NotifyDemo["hooks"] = [];
  let verifier: Webhook | null = null;

  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, done) {
      simpleParser(stream)
        .then((parsed) => {
          const text = parsed.text ?? "";
          const mail: DemoMail = {
            at: new Date().toISOString(),
            to: session.envelope.rcptTo.map((r) => r.address),
            subject: parsed.subject ?? "",
            links: [...new Set(text.match(/https?:\/\/[^\s"<>]+/g) ?? [])],
            text,
          };
          mails.push(mail);
          if (mails.length > KEEP) mails.shift();
          print(`mail to ${mail.to.join(", ")}: ${mail.subject}`);
          for (const link of mail.links) print(`    ${link}`);
          done();
        })
        .catch((error: Error) => done(error));
    },
  });
  await new Promise<void>((done) => smtp.listen(0, "127.0.0.1", done));
  const smtpPort = (smtp.server.address() as AddressInfo).port;

  const http: Server = createServer((request, response) => {
    if (request.method === "GET" && request.url === "/demo/mail") {
      const rows = [...mails]
        .reverse()
        .map(
          (m) =>
            `<article><h2>${escape(m.subject)}</h2><p>to ${escape(m.to.join(", "))} at ${escape(m.at)}</p><pre>${escape(m.text).replace(/(https?:\/\/[^\s&]+)/g, '<a href="$1">$1</a>')}</pre></article>`,
        )
        .join("\n");
      response
        .writeHead(200, { "content-type": "text/html; charset=utf-8" })
        .end(
          `<!doctype html><meta charset="utf-8"><title>Demo mail</title><h1>Demo mail (last ${KEEP})</h1>${rows || "<p>No mail yet.</p>"}`,
        );
      return;
    }
    if (request.method === "POST" && request.url === "/demo/hook") {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString()));
      request.on("end", () => {
        try {
          if (!verifier) throw new WebhookVerificationError("no secret yet");
          const event = verifier.verify(body, {
            "webhook-id": String(request.headers["webhook-id"]),
            "webhook-timestamp": String(request.headers["webhook-timestamp"]),
            "webhook-signature": String(request.headers["webhook-signature"]),
          }) as { type: string; data: { threadId: string; node?: string; actor?: string | null } };
          hooks.push({
            id: String(request.headers["webhook-id"]),
            type: event.type,
            threadId: event.data.threadId,
          });
          const who = event.data.actor ? ` by ${event.data.actor}` : "";
          print(
            `webhook ${event.type} (signature verified): ${event.data.threadId}${event.data.node ? ` at ${event.data.node}` : ""}${who}`,
          );
          response.writeHead(204).end();
        } catch (error) {
          print(`webhook refused: ${error instanceof Error ? error.message : String(error)}`);
          response.writeHead(400).end();
        }
      });
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((done) => http.listen(0, "127.0.0.1", done));
  const httpPort = (http.address() as AddressInfo).port;

  return {
    hookUrl: `http://127.0.0.1:${httpPort}/demo/hook`,
    mailUrl: `http://127.0.0.1:${httpPort}/demo/mail`,
    smtpUrl: `smtp://127.0.0.1:${smtpPort}`,
    mails,
    hooks,
    setSecret(secret) {
      verifier = new Webhook(secret);
    },
    async close() {
      http.closeAllConnections();
      await new Promise<void>((done) => http.close(() => done()));
      await new Promise<void>((done) => smtp.close(() => done()));
    },
  };
}

/**
 * Writes the notifier config of the demo next to its store: the server's URL, one person per
 * token (address `<subject>@support-desk.test`), a fallback for questions without a policy, the
 * SMTP server, and a link secret kept across restarts (so links mailed earlier still verify).
 */
export function writeNotifyConfig(options: {
  file: string;
  publicUrl: string;
  smtpUrl: string;
  tokens: readonly DemoToken[];
}): void {
  let secret = randomBytes(32).toString("base64url");
  if (existsSync(options.file)) {
    const previous = JSON.parse(readFileSync(options.file, "utf8")) as {
      links?: { secret?: string };
    };
    secret = previous.links?.secret ?? secret;
  }
  mkdirSync(dirname(options.file), { recursive: true });
  writeFileSync(
    options.file,
    JSON.stringify(
      {
        publicUrl: options.publicUrl,
        people: options.tokens
          .filter((t) => !t.scopes.includes("admin"))
          .map((t) => ({
            subject: t.subject,
            ...(t.tenant ? { tenant: t.tenant } : {}),
            groups: t.groups ?? [],
            roles: t.roles ?? [],
            email: demoAddress(t.subject),
          })),
        fallback: ["support-lead@support-desk.test"],
        email: {
          smtp: options.smtpUrl,
          from: "Rein support desk <rein@support-desk.test>",
          events: ["interrupt.pending", "interrupt.reminded", "interrupt.escalated"],
        },
        links: { ttl: "3d", secret },
      },
      null,
      2,
    ),
    { mode: 0o600 },
  );
}
