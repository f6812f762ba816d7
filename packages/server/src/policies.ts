/**
 * Server-side default approval policies per graph (`rein serve --policies FILE`): who may answer
 * the questions a graph raises without approvers of their own. A JSON file holds plain policies
 * or declarative rules over the payload (`{ "when": { "path": "amount", "gt": 1000 }, "then":
 * { "groups": ["finance"], "count": 2 } }`), since a file cannot hold a function.
 */
import { readFileSync } from "node:fs";
import { InvalidInputError, type ApproversSpec } from "@rein/core";
import { z } from "zod";

const Names = z.array(z.string().min(1).max(256)).max(1000);

const ApproversJson = z
  .object({
    subjects: Names.optional(),
    groups: Names.optional(),
    roles: Names.optional(),
    count: z.number().int().positive().max(100).optional(),
    notRequester: z.boolean().optional(),
  })
  .strict();

const RuleJson = z
  .object({
    when: z
      .object({
        path: z.string().min(1).max(256),
        gt: z.number().optional(),
        gte: z.number().optional(),
        lt: z.number().optional(),
        lte: z.number().optional(),
        eq: z.unknown().optional(),
      })
      .strict()
      .optional(),
    then: ApproversJson.nullable(),
  })
  .strict();

const SpecJson = z.union([RuleJson, z.array(RuleJson).min(1), ApproversJson]);

const PoliciesFile = z.union([
  z.object({ policies: z.record(z.string(), SpecJson) }).strict(),
  z.record(z.string(), SpecJson),
]);

/**
 * Parses a policies file: `{ "policies": { "<graph>": spec } }` or the bare object, each spec a
 * policy, a rule or a list of rules (the first whose `when` holds decides).
 *
 * @throws InvalidInputError naming what is wrong.
 */
export function parsePolicies(text: string, source: string): Record<string, ApproversSpec> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new InvalidInputError(`${source} is not valid JSON.`, { source });
  }
  const parsed = PoliciesFile.safeParse(raw);
  if (!parsed.success)
    throw new InvalidInputError(
      `${source} must hold { "policies": { "<graph>": { "groups": [...], "count": 2 } or rules } }: ${parsed.error.issues
        .map((i) => `${i.path.join(".")}: ${i.message}`)
        .join("; ")}`,
      { source },
    );
  const table = "policies" in parsed.data ? parsed.data.policies : parsed.data;
  return table as Record<string, ApproversSpec>;
}

/** The policies of a file (`--policies FILE`). */
export function loadPolicies(file: string): Record<string, ApproversSpec> {
  return parsePolicies(readFileSync(file, "utf8"), file);
}
