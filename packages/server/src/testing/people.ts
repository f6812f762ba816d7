/**
 * People of tenant acme for the tests of governed questions across processes: a token with the
 * scopes to start and answer runs, and the groups an approval policy checks.
 */

/** One person's token, as a `--tokens` file lists it. */
export interface TestPerson {
  token: string;
  subject: string;
  tenant: string;
  scopes: string[];
  groups: string[];
}

/** `<name>@acme` with `groups`, and a token that may read, start and answer runs by default. */
export function acmePerson(
  name: string,
  groups: string[],
  scopes = ["read", "run", "resume"],
): TestPerson {
  return {
    token: `${name}-acme-test-token-0123456789`,
    subject: `${name}@acme`,
    tenant: "acme",
    scopes,
    groups,
  };
}
