/**
 * The demo's world: a sample ticket, an order book and a refund policy (read-only), a payment
 * ledger file and an email outbox folder (the two irreversible side effects).
 */
import { createHash } from "node:crypto";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";

/** A customer's support ticket. */
export interface Ticket {
  id: string;
  customer: string;
  email: string;
  orderId: string;
  text: string;
}

/** The ticket a run starts on when its input is `{}`. */
export const sampleTicket: Ticket = {
  id: "T-1042",
  customer: "Dana Reyes",
  email: "dana.reyes@example.com",
  orderId: "1042",
  text: "My order 1042 (two ceramic mugs, $120) arrived with one mug shattered. Can I get my money back?",
};

/**
 * A ticket whose refund is over $1,000: two people from finance must approve it, and not the
 * person who opened the run (see docs/governance.md).
 */
export const largeTicket: Ticket = {
  id: "T-2077",
  customer: "Sam Okafor",
  email: "sam.okafor@example.com",
  orderId: "2077",
  text: "My order 2077 (an espresso machine, $1,450) arrived with a cracked boiler. I want a full refund.",
};

/** Orders the research agent can look up. */
export const orders: Record<string, { items: string; total: number; delivered: string }> = {
  "1042": { items: "2 × ceramic mug (set)", total: 120, delivered: "2026-11-24" },
  "2077": { items: "espresso machine", total: 1450, delivered: "2026-11-26" },
};

/** The refund policy the research agent can search. */
export const policy =
  "Items damaged in transit are refunded in full within 30 days of delivery; partial damage to a set is refunded pro rata.";

/** One line of the payment ledger: every refund the payment API executed. */
export interface LedgerEntry {
  idempotencyKey: string;
  orderId: string;
  amount: number;
  reason: string;
  receipt: string;
}

/** The demo's files: a payment ledger (JSON lines) and an outbox folder of sent emails. */
export class DeskFiles {
  readonly ledgerPath: string;
  readonly outboxDir: string;

  constructor(readonly dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    this.ledgerPath = join(dataDir, "ledger.jsonl");
    this.outboxDir = join(dataDir, "outbox");
    mkdirSync(this.outboxDir, { recursive: true });
  }

  /**
   * Stands in for a payment API: every call moves money, so it appends a line. The runtime's
   * `once` and the idempotency key are what keep a re-run from paying twice; a double refund
   * would show here as two lines.
   */
  pay(entry: Omit<LedgerEntry, "receipt">): LedgerEntry {
    const receipt = `rf_${createHash("sha256").update(entry.idempotencyKey).digest("hex").slice(0, 10)}`;
    const line: LedgerEntry = { ...entry, receipt };
    appendFileSync(this.ledgerPath, `${JSON.stringify(line)}\n`);
    return line;
  }

  /** Every refund paid so far, or those paid for one thread (by its idempotency keys). */
  ledger(threadId?: string): LedgerEntry[] {
    if (!existsSync(this.ledgerPath)) return [];
    return readFileSync(this.ledgerPath, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as LedgerEntry)
      .filter((e) => threadId === undefined || e.idempotencyKey.startsWith(`rein:${threadId}:`));
  }

  /** Stands in for a mail server: writes the message to the outbox folder. */
  send(mail: { to: string; subject: string; body: string; idempotencyKey: string }): string {
    const name = `${createHash("sha256").update(mail.idempotencyKey).digest("hex").slice(0, 10)}.eml`;
    writeFileSync(
      join(this.outboxDir, name),
      `To: ${mail.to}\nSubject: ${mail.subject}\nIdempotency-Key: ${mail.idempotencyKey}\n\n${mail.body}\n`,
    );
    return name;
  }

  /** The sent emails (all, or one thread's): file name and content. */
  outbox(threadId?: string): { file: string; content: string }[] {
    return readdirSync(this.outboxDir)
      .sort()
      .map((file) => ({ file, content: readFileSync(join(this.outboxDir, file), "utf8") }))
      .filter(
        (m) => threadId === undefined || m.content.includes(`Idempotency-Key: rein:${threadId}:`),
      );
  }
}
