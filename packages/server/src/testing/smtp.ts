/**
 * A local SMTP server for the email tests (`smtp-server`): it accepts every message, parses it
 * (`mailparser`) and keeps it for the test to read back; it can go down and come back on the
 * same port.
 */
import { createServer, type AddressInfo } from "node:net";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";
import { vi } from "vitest";

/** One message the server accepted. */
export interface ReceivedMail {
  to: string[];
  subject: string;
  text: string;
  html: string;
  messageId: string;
}

/** A free loopback port (bound and released: for a server that must know its URL in advance). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, "127.0.0.1", done));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((done) => probe.close(() => done()));
  return port;
}

/** A running SMTP server. */
export class TestSmtp {
  readonly received: ReceivedMail[] = [];
  #server: SMTPServer | null = null;

  private constructor(readonly port: number) {}

  /** Starts on `port` (default: a free one). */
  static async start(port?: number): Promise<TestSmtp> {
    const smtp = new TestSmtp(port ?? (await freePort()));
    await smtp.up();
    return smtp;
  }

  /** `smtp://127.0.0.1:<port>`. */
  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** Listens (again) on its port. */
  async up(): Promise<void> {
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS", "AUTH"],
      logger: false,
      onData: (stream, session, done) => {
        simpleParser(stream)
          .then((mail) => {
            this.received.push({
              to: session.envelope.rcptTo.map((r) => r.address),
              subject: mail.subject ?? "",
              text: mail.text ?? "",
              html: typeof mail.html === "string" ? mail.html : "",
              messageId: mail.messageId ?? "",
            });
            done();
          })
          .catch((error: Error) => done(error));
      },
    });
    await new Promise<void>((done, fail) => {
      server.once("error", fail);
      server.listen(this.port, "127.0.0.1", () => done());
    });
    this.#server = server;
  }

  /** Stops listening (connections are refused until {@link TestSmtp.up}). */
  async down(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    if (server) await new Promise<void>((done) => server.close(() => done()));
  }

  /** Waits until `count` messages match `filter`; returns them. */
  async waitFor(
    count: number,
    filter: (mail: ReceivedMail) => boolean = () => true,
    timeoutMs = 15_000,
  ): Promise<ReceivedMail[]> {
    return vi.waitFor(
      () => {
        const found = this.received.filter(filter);
        if (found.length >= count) return found;
        throw new Error(
          `expected ${count} mail(s), got ${found.length}: ${JSON.stringify(this.received.map((m) => [m.to, m.subject]))}`,
        );
      },
      { timeout: timeoutMs, interval: 50 },
    );
  }
}

/** The decision links in a message's text, by decision. */
export function linksOf(mail: ReceivedMail): { approve?: string; reject?: string } {
  const approve = /^Approve: (\S+)$/m.exec(mail.text)?.[1];
  const reject = /^Reject: (\S+)$/m.exec(mail.text)?.[1];
  return { ...(approve ? { approve } : {}), ...(reject ? { reject } : {}) };
}
