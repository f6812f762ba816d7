/**
 * Tool argument schemas: any Standard Schema (zod 4, valibot, arktype...) validates arguments;
 * its JSON Schema (Standard JSON Schema, or one given by hand) is what the model and the
 * approval check see.
 */
import { z } from "zod";
import { InvalidInputError } from "../errors.ts";

/**
 * The Standard Schema v1 interface (standardschema.dev), copied as the spec recommends so that
 * no schema library is a dependency. zod 4 schemas implement it.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    /** Standard JSON Schema (optional): zod 4.2+ implements it. */
    readonly jsonSchema?: {
      readonly input: (options: { target: string }) => Record<string, unknown>;
    };
  };
}

/** The result of a Standard Schema validation. */
export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: readonly StandardIssue[] };

/** One validation issue. */
export interface StandardIssue {
  readonly message: string;
  readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined;
}

/** A permissive object schema: what a tool without a schema advertises. */
const anyObject: Record<string, unknown> = { type: "object", additionalProperties: true };

/**
 * The JSON Schema of a tool's arguments: `jsonSchema` when given, else the schema's Standard JSON
 * Schema, else any object.
 *
 * @throws InvalidInputError when the schema cannot be expressed as JSON Schema and none was given.
 */
export function argsJsonSchema(
  schema: StandardSchemaV1 | undefined,
  jsonSchema: Record<string, unknown> | undefined,
  toolName: string,
): Record<string, unknown> {
  if (jsonSchema) return jsonSchema;
  const convert = schema?.["~standard"].jsonSchema;
  if (!schema) return anyObject;
  if (!convert)
    throw new InvalidInputError(
      `Tool "${toolName}": its schema (${schema["~standard"].vendor}) has no JSON Schema converter; pass \`jsonSchema\` with the tool.`,
      { tool: toolName },
    );
  let converted: Record<string, unknown>;
  try {
    converted = convert.input({ target: "draft-2020-12" });
  } catch (error) {
    throw new InvalidInputError(
      `Tool "${toolName}": its schema cannot be expressed as JSON Schema (${error instanceof Error ? error.message : String(error)}); pass \`jsonSchema\` with the tool.`,
      { tool: toolName },
    );
  }
  const { $schema: _drop, ...rest } = converted;
  return rest;
}

/** Validates `value` with a Standard Schema; issues as `path: message` lines on failure. */
export async function validateStandard<T>(
  schema: StandardSchemaV1<unknown, T>,
  value: unknown,
): Promise<{ ok: true; value: T } | { ok: false; issues: readonly StandardIssue[]; text: string }> {
  const result = await schema["~standard"].validate(value);
  if (result.issues === undefined) return { ok: true, value: result.value };
  const text = result.issues
    .map((i) => {
      const path = (i.path ?? []).map((p) => String(typeof p === "object" ? p.key : p)).join(".");
      return path ? `${path}: ${i.message}` : i.message;
    })
    .join("; ");
  return { ok: false, issues: result.issues, text };
}

/**
 * A zod schema equivalent to a JSON Schema, for an interrupt's `answer` option: the runtime
 * stores it as JSON Schema and checks answers against it before storing them.
 */
export function zodFromJsonSchema(jsonSchema: Record<string, unknown>): z.ZodType {
  return z.fromJSONSchema(jsonSchema);
}
