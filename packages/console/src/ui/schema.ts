/**
 * A small JSON Schema check for answers, run in the browser before sending. It covers what zod's
 * `toJSONSchema` emits for answer schemas (type, const, enum, properties, required,
 * additionalProperties, items, oneOf/anyOf/allOf, string and number bounds) and passes keywords it
 * does not know: the server validates every answer again and a 422 is shown in words, so this
 * check only spares the reviewer a round trip.
 */

/** A JSON Schema as the server sends it (`answerSchema` of a queue item). */
export type JsonSchema = { [keyword: string]: unknown } | boolean;

/** One problem found: where (a JSON path like `args.amount`) and what. */
export interface SchemaProblem {
  path: string;
  message: string;
}

/**
 * Problems that mean "this is another variant" (a discriminator `const` differs): a union's
 * closest option is the one without them, whatever its other problems.
 */
const wrongBranch = new WeakSet<SchemaProblem>();

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function matchesType(value: unknown, type: string): boolean {
  const actual = typeOf(value);
  return actual === type || (type === "number" && actual === "integer");
}

const at = (path: string, key: string | number): string =>
  path ? `${path}.${String(key)}` : String(key);

/** Problems of `value` against `schema`; empty when it conforms. */
export function checkSchema(schema: JsonSchema, value: unknown, path = ""): SchemaProblem[] {
  if (schema === true) return [];
  if (schema === false) return [{ path, message: "no value is allowed here" }];
  const problems: SchemaProblem[] = [];
  const where = path || "the answer";
  const type = schema["type"];
  if (typeof type === "string" && !matchesType(value, type))
    return [{ path, message: `${where} must be ${type === "object" ? "an object" : `a ${type}`}` }];
  if (Array.isArray(type) && !type.some((t) => typeof t === "string" && matchesType(value, t)))
    return [{ path, message: `${where} must be one of: ${type.join(", ")}` }];
  if ("const" in schema && JSON.stringify(schema["const"]) !== JSON.stringify(value)) {
    const problem = { path, message: `${where} must be ${JSON.stringify(schema["const"])}` };
    wrongBranch.add(problem);
    problems.push(problem);
  }
  const enumValues = schema["enum"];
  if (
    Array.isArray(enumValues) &&
    !enumValues.some((e) => JSON.stringify(e) === JSON.stringify(value))
  )
    problems.push({
      path,
      message: `${where} must be one of ${enumValues.map((e) => JSON.stringify(e)).join(", ")}`,
    });
  problems.push(...checkBounds(schema, value, path, where));
  if (isObject(value)) problems.push(...checkObject(schema, value, path));
  if (Array.isArray(value) && (isObject(schema["items"]) || typeof schema["items"] === "boolean"))
    value.forEach((item, i) =>
      problems.push(...checkSchema(schema["items"] as JsonSchema, item, at(path, i))),
    );
  problems.push(...checkCombinators(schema, value, path, where));
  return problems;
}

function checkBounds(
  schema: Record<string, unknown>,
  value: unknown,
  path: string,
  where: string,
): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const num = (k: string) => (typeof schema[k] === "number" ? schema[k] : undefined);
  if (typeof value === "string") {
    const min = num("minLength");
    const max = num("maxLength");
    if (min !== undefined && value.length < min)
      problems.push({ path, message: `${where} must have at least ${min} characters` });
    if (max !== undefined && value.length > max)
      problems.push({ path, message: `${where} must have at most ${max} characters` });
  }
  if (typeof value === "number") {
    const min = num("minimum");
    const max = num("maximum");
    if (min !== undefined && value < min)
      problems.push({ path, message: `${where} must be at least ${min}` });
    if (max !== undefined && value > max)
      problems.push({ path, message: `${where} must be at most ${max}` });
    const exMin = num("exclusiveMinimum");
    if (exMin !== undefined && value <= exMin)
      problems.push({ path, message: `${where} must be more than ${exMin}` });
    const exMax = num("exclusiveMaximum");
    if (exMax !== undefined && value >= exMax)
      problems.push({ path, message: `${where} must be less than ${exMax}` });
  }
  return problems;
}

function checkObject(
  schema: Record<string, unknown>,
  value: Record<string, unknown>,
  path: string,
): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const properties = isObject(schema["properties"]) ? schema["properties"] : {};
  const required = Array.isArray(schema["required"]) ? schema["required"] : [];
  for (const key of required)
    if (typeof key === "string" && !(key in value))
      problems.push({ path: at(path, key), message: `${at(path, key)} is required` });
  for (const [key, child] of Object.entries(value)) {
    const sub = properties[key];
    if (sub !== undefined) problems.push(...checkSchema(sub as JsonSchema, child, at(path, key)));
    else if (schema["additionalProperties"] === false)
      problems.push({ path: at(path, key), message: `${at(path, key)} is not expected` });
    else if (isObject(schema["additionalProperties"]))
      problems.push(...checkSchema(schema["additionalProperties"], child, at(path, key)));
  }
  return problems;
}

function checkCombinators(
  schema: Record<string, unknown>,
  value: unknown,
  path: string,
  where: string,
): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const allOf = Array.isArray(schema["allOf"]) ? (schema["allOf"] as JsonSchema[]) : [];
  for (const sub of allOf) problems.push(...checkSchema(sub, value, path));
  for (const keyword of ["oneOf", "anyOf"] as const) {
    const options = schema[keyword];
    if (!Array.isArray(options)) continue;
    const results = (options as JsonSchema[]).map((sub) => checkSchema(sub, value, path));
    const passing = results.filter((r) => r.length === 0).length;
    if (passing === 0) {
      // The closest option's problems say more than "matches no option".
      const rank = (r: SchemaProblem[]) =>
        r.length + (r.some((p) => wrongBranch.has(p)) ? 1000 : 0);
      const closest = results.reduce((a, b) => (rank(b) < rank(a) ? b : a), results[0] ?? []);
      problems.push(
        ...(closest.length > 0
          ? closest
          : [{ path, message: `${where} matches none of the allowed shapes` }]),
      );
    } else if (keyword === "oneOf" && passing > 1)
      problems.push({ path, message: `${where} matches more than one allowed shape` });
  }
  return problems;
}
