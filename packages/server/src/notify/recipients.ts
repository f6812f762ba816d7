/**
 * Who is told about a question: the configured people its approval policy lets answer (never the
 * requester under four eyes), the people an escalation names, or the fallback addresses when the
 * question has no policy.
 */
import { listed } from "@rein/core/store";
import type { Person } from "./config.ts";

/** Who a policy or an escalation names. */
export interface Audience {
  subjects?: readonly string[] | undefined;
  groups?: readonly string[] | undefined;
  roles?: readonly string[] | undefined;
}

/** The recipients of one event: people (with their principal) or bare fallback addresses. */
export type Recipient = { person: Person; address: string } | { person: null; address: string };

/**
 * The recipients of a question for `audience` (the policy's approvers, or an escalation's
 * `escalatedTo`); `null` audience means the question has no policy: the fallback addresses.
 * `requester` is left out when `notRequester`, and people of another `tenant` than the
 * question's. Each address once.
 */
export function recipientsOf(
  people: readonly Person[],
  fallback: readonly string[],
  audience: Audience | null,
  exclude: { notRequester: boolean; requester: string | null },
  tenant: string | null = null,
): Recipient[] {
  const seen = new Set<string>();
  const out: Recipient[] = [];
  if (audience === null) {
    for (const address of fallback)
      if (!seen.has(address)) {
        seen.add(address);
        out.push({ person: null, address });
      }
    return out;
  }
  for (const person of people) {
    if (!person.email || seen.has(person.email) || !listed(audience, person)) continue;
    // A person of another tenant never hears of (nor gets a link to) this tenant's questions.
    if (person.tenant !== undefined && person.tenant !== tenant) continue;
    if (exclude.notRequester && exclude.requester !== null && person.subject === exclude.requester)
      continue;
    seen.add(person.email);
    out.push({ person, address: person.email });
  }
  return out;
}
