/**
 * The email notifier: for each recipient of a question, one message (nodemailer over SMTP) with
 * the question's summary, its approval state, the decision links bound to that recipient, and an
 * "Open in console" link. Fed by the webhook outbox (`notify:email`): a failed send is retried by
 * the delivery loop with its backoff, under the same event id.
 */
import type { InterruptId } from "@rein/core";
import type { StoredInterrupt } from "@rein/core/store";
import nodemailer from "nodemailer";
import type { InterruptEventData } from "../webhooks/payload.ts";
import type { LinkSettings, NotifyConfig } from "./config.ts";
import { mintDecisionLinks } from "./links.ts";
import type { Notifier, NotifierDelivery } from "./notifier.ts";
import { escapeHtml } from "./pages.ts";
import { approvalState, consoleLink, graphLabel, questionSummary } from "./question.ts";
import { recipientsOf, type Recipient } from "./recipients.ts";
import type { MintedLink } from "./tokens.ts";

/** What the email notifier needs besides its config section. */
export interface EmailNotifierOptions {
  config: NotifyConfig & { email: NonNullable<NotifyConfig["email"]> };
  /** Link settings; without, messages carry only the console link. */
  links: LinkSettings | null;
  /** Reads an interrupt (its policy, approvals and status at send time). */
  getInterrupt: (id: InterruptId) => Promise<StoredInterrupt | undefined>;
}

/** Event types whose recipients are the policy's approvers. */
const TO_APPROVERS = new Set<string>(["interrupt.pending", "interrupt.reminded"]);

/** Why an event sends nothing (it is delivered all the same: there is nothing to retry). */
function skip(type: string, data: InterruptEventData): boolean {
  return (
    (type !== "interrupt.escalated" && !TO_APPROVERS.has(type)) ||
    typeof data.interruptId !== "string"
  );
}

/** The email notifier of a config with an `email` section. */
export class EmailNotifier implements Notifier {
  readonly kind = "email";
  readonly #transport: nodemailer.Transporter;

  constructor(private readonly options: EmailNotifierOptions) {
    this.#transport = nodemailer.createTransport(options.config.email.smtp);
  }

  /** Sends the event's messages; throws (so the loop retries) when the SMTP server refuses. */
  async send(delivery: NotifierDelivery): Promise<void> {
    const { type } = delivery.body;
    const data = delivery.body.data as InterruptEventData;
    if (skip(type, data)) return;
    const interrupt = await this.options.getInterrupt(data.interruptId);
    // Answered or gone since: a message would only carry links that are refused.
    if (!interrupt || interrupt.status !== "pending") return;
    const recipients = this.recipients(type, data, interrupt);
    for (const recipient of recipients) {
      await this.#transport.sendMail({
        from: this.options.config.email.from,
        to: recipient.address,
        subject: subjectLine(type, interrupt),
        ...this.message(type, interrupt, recipient),
        // The same event's message keeps one id across retries, so a receiver can drop a repeat.
        messageId: `<${delivery.id}.${encodeURIComponent(recipient.address)}@rein>`,
        headers: { "X-Rein-Event": delivery.id, "X-Rein-Interrupt": interrupt.id },
      });
    }
  }

  /** Who is told: the policy's approvers, an escalation's audience, or the fallback. */
  recipients(type: string, data: InterruptEventData, interrupt: StoredInterrupt): Recipient[] {
    const { people, fallback } = this.options.config;
    const policy = interrupt.policy ?? null;
    const exclude = {
      notRequester: policy?.notRequester ?? false,
      requester: policy?.requester ?? null,
    };
    const audience = type === "interrupt.escalated" ? (data.escalatedTo ?? policy) : policy;
    return recipientsOf(people, fallback, audience, exclude, interrupt.tenant);
  }

  message(
    type: string,
    interrupt: StoredInterrupt,
    recipient: Recipient,
  ): { text: string; html: string } {
    const consoleUrl = consoleLink(this.options.config.publicUrl, interrupt.threadId, interrupt.id);
    const links: MintedLink[] =
      this.options.links && recipient.person
        ? mintDecisionLinks(this.options.links, interrupt, {
            subject: recipient.person.subject,
            groups: recipient.person.groups ?? [],
            roles: recipient.person.roles ?? [],
          })
        : [];
    const summary = questionSummary(interrupt.payload, 400);
    const state = approvalState(interrupt.policy, interrupt.approvals);
    const lead =
      type === "interrupt.escalated"
        ? "A question was escalated to you: nobody answered it in time."
        : type === "interrupt.reminded"
          ? "Reminder: this question still waits for an answer."
          : "An agent asks for a decision.";
    const expires = links[0]?.expiresAt;
    const text = [
      lead,
      "",
      `Question: ${summary}`,
      `Graph: ${graphLabel(interrupt)}`,
      `Thread: ${interrupt.threadId}`,
      ...(state ? [`Approvals: ${state}`] : []),
      "",
      ...links.map((l) => `${l.decision === "approve" ? "Approve" : "Reject"}: ${l.url}`),
      ...(expires
        ? [`(links work once, as ${recipient.person?.subject ?? ""}, until ${expires})`, ""]
        : []),
      `Open in console: ${consoleUrl}`,
    ].join("\n");
    const html = `<p>${escapeHtml(lead)}</p>
<p><strong>${escapeHtml(summary)}</strong></p>
<p>Graph: ${escapeHtml(graphLabel(interrupt))}<br>Thread: ${escapeHtml(interrupt.threadId)}${state ? `<br>Approvals: ${escapeHtml(state)}` : ""}</p>
${links.map((l) => `<p><a href="${escapeHtml(l.url)}">${l.decision === "approve" ? "Approve" : "Reject"}</a></p>`).join("\n")}
${expires ? `<p style="color:#555">Each link opens a confirmation page, works once, as ${escapeHtml(recipient.person?.subject ?? "")}, until ${escapeHtml(expires)}.</p>` : ""}
<p><a href="${escapeHtml(consoleUrl)}">Open in console</a></p>`;
    return { text, html };
  }

  /** Closes the SMTP connections. */
  close(): void {
    this.#transport.close();
  }
}

/** `[graph] Approval needed: <summary>` (escalations and reminders say so). */
function subjectLine(type: string, interrupt: StoredInterrupt): string {
  const what =
    type === "interrupt.escalated"
      ? "Escalated"
      : type === "interrupt.reminded"
        ? "Reminder"
        : "Approval needed";
  return `[${graphLabel(interrupt)}] ${what}: ${questionSummary(interrupt.payload, 80)}`;
}
