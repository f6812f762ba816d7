/**
 * Minting the decision links of one question for one principal: a link per decision the
 * question offers, each bound to the interrupt, its payload digest and the principal.
 */
import { payloadDigest } from "@rein/core";
import type { StoredInterrupt } from "@rein/core/store";
import type { LinkSettings } from "./config.ts";
import { linkDecisions } from "./question.ts";
import { mintLink, type LinkPrincipal, type MintedLink } from "./tokens.ts";

/**
 * The digest a link binds: the policy's (what every approval records), else the payload's.
 * A question raised again with another payload has another digest, so its old links fail.
 */
export function questionDigest(interrupt: StoredInterrupt): string {
  return interrupt.policy?.digest ?? payloadDigest(interrupt.payload);
}

/** The links of `interrupt` for `principal`: one per decision it offers (none for a plain question). */
export function mintDecisionLinks(
  settings: LinkSettings,
  interrupt: StoredInterrupt,
  principal: LinkPrincipal,
  ttlMs: number = settings.ttlMs,
): MintedLink[] {
  return linkDecisions(interrupt.payload).map((decision) =>
    mintLink(
      settings,
      {
        interruptId: interrupt.id,
        threadId: interrupt.threadId,
        tenant: interrupt.tenant,
        digest: questionDigest(interrupt),
        principal: {
          subject: principal.subject,
          groups: [...principal.groups],
          roles: [...principal.roles],
        },
        decision,
      },
      ttlMs,
    ),
  );
}
