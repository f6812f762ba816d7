/**
 * One zod schema per request shape of the v2 protocol: the command envelope, each command's
 * params, and the event stream request. Unknown fields pass (the protocol's types are
 * extensible); the fields Rein reads are checked.
 */
import { InterruptIdSchema, RunIdSchema } from "@rein/wire";
import { z } from "zod";
import { CHANNELS } from "./protocol.ts";

const NamespaceSchema = z.array(z.string().max(512)).max(64);

/** `{ id, method, params }`: `id` correlates the response. */
export const CommandEnvelope = z.looseObject({
  id: z.number().int().nonnegative(),
  method: z.string().min(1).max(100),
  params: z.record(z.string(), z.unknown()).optional(),
});

/** `run.start`. */
export const RunStartParams = z.looseObject({
  assistant_id: z.string().min(1).max(512),
  input: z.union([z.record(z.string(), z.unknown()), z.null()]).optional(),
  config: z.record(z.string(), z.unknown()).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

/** One answer of `input.respond`. */
export const RespondEntry = z.looseObject({
  namespace: NamespaceSchema,
  interrupt_id: InterruptIdSchema,
  response: z.unknown(),
});

/** `input.respond` with one answer. */
export const InputRespondOne = RespondEntry.extend({
  update: z.record(z.string(), z.unknown()).optional(),
  goto: z.unknown().optional(),
});

/** `input.respond` with a batch of answers in `responses`, applied all or none. */
export const InputRespondMany = z.looseObject({
  responses: z.array(RespondEntry).min(1).max(1000),
  update: z.record(z.string(), z.unknown()).optional(),
  goto: z.unknown().optional(),
});

/** `input.inject`. */
export const InputInjectParams = z.looseObject({
  namespace: NamespaceSchema,
  message: z.looseObject({
    role: z.enum(["user", "system"]),
    content: z.string().min(1).max(10_000),
    name: z.string().max(200).optional(),
  }),
});

/** `state.get`. */
export const StateGetParams = z.looseObject({
  namespace: NamespaceSchema.optional(),
  keys: z.array(z.string().max(200)).max(200).optional(),
});

/** `state.listCheckpoints`. */
export const ListCheckpointsParams = z.looseObject({
  namespace: NamespaceSchema.optional(),
  limit: z.number().int().min(1).max(100).optional(),
  before: z.string().max(512).optional(),
});

/** `config.configurable.checkpoint_id` of `run.start` (where the SDK puts `forkFrom`). */
export const ForkConfig = z.looseObject({
  configurable: z.looseObject({ checkpoint_id: z.string().min(1).max(256).optional() }).optional(),
});

/** `state.fork`: a run from one of the thread's past checkpoints. */
export const StateForkParams = z.looseObject({
  checkpoint_id: z.string().min(1).max(256),
  input: z.union([z.record(z.string(), z.unknown()), z.null()]).optional(),
  config: z.record(z.string(), z.unknown()).optional(),
});

/** `agent.getTree`. */
export const GetTreeParams = z.looseObject({ run_id: RunIdSchema.optional() });

const ChannelSchema = z.union([
  z.enum(CHANNELS),
  z.string().regex(/^custom:[^\r\n]{1,200}$/, "a channel name or custom:<name>"),
]);

/** The body of `POST /threads/:id/stream/events`. */
export const EventStreamRequest = z.looseObject({
  channels: z.array(ChannelSchema).min(1).max(20),
  namespaces: z.array(NamespaceSchema).max(100).optional(),
  depth: z.number().int().nonnegative().max(64).optional(),
  since: z.number().int().nonnegative().optional(),
});
