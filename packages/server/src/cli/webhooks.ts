/**
 * `rein webhooks add|list|remove|rotate|deliveries`: a tenant's webhook subscriptions, through
 * the `/webhooks` routes (an admin token).
 */
import type { WebhookEventType } from "@rein/client";
import { clientOf, type ClientFlags } from "./commands.ts";
import { table, type Io } from "./output.ts";
import { UsageError } from "./serve.ts";

/** The flags of `rein webhooks`. */
export interface WebhookFlags {
  /** `--events a,b`. */
  events?: string | undefined;
  /** `--graph g1,g2`. */
  graph?: string | undefined;
  /** `--grace SECONDS`. */
  grace?: number | undefined;
  limit?: number | undefined;
}

const list = (text: string | undefined): string[] =>
  (text ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");

function json(io: Io, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}

type Client = ReturnType<typeof clientOf>;

async function add(
  io: Io,
  flags: ClientFlags,
  client: Client,
  url: string,
  options: WebhookFlags,
): Promise<void> {
  const events = list(options.events);
  if (events.length === 0)
    throw new UsageError("Pass --events, e.g. --events interrupt.pending,interrupt.answered.");
  const created = await client.createWebhook({
    url,
    events: events as WebhookEventType[],
    graphs: list(options.graph),
  });
  if (flags.json) return json(io, created);
  io.out(`webhook ${created.id} → ${created.url}\n`);
  io.out(`secret: ${created.secret}\n(shown only now: store it where the receiver reads it)\n`);
}

async function show(io: Io, flags: ClientFlags, client: Client): Promise<void> {
  const hooks = await client.listWebhooks();
  if (flags.json) return json(io, hooks);
  io.out(
    table(
      ["WEBHOOK", "URL", "EVENTS", "GRAPHS", "CREATED"],
      hooks.map((h) => [h.id, h.url, h.events.join(","), h.graphs.join(",") || "*", h.createdAt]),
    ),
  );
}

async function rotate(
  io: Io,
  flags: ClientFlags,
  client: Client,
  id: string,
  grace?: number,
): Promise<void> {
  const rotated = await client.rotateWebhookSecret(
    id,
    grace === undefined ? {} : { graceSeconds: grace },
  );
  if (flags.json) return json(io, rotated);
  io.out(`secret: ${rotated.secret}\n`);
  io.out(`the old secret signs too until ${rotated.previousSecretUntil}\n`);
}

async function deliveries(
  io: Io,
  flags: ClientFlags,
  client: Client,
  id: string,
  limit?: number,
): Promise<void> {
  const items = await client.listWebhookDeliveries(id, limit === undefined ? {} : { limit });
  if (flags.json) return json(io, items);
  io.out(
    table(
      ["EVENT", "TYPE", "STATUS", "ATTEMPTS", "LAST", "NEXT"],
      items.map((d) => {
        const last = d.log.at(-1);
        const answer = last
          ? last.statusCode === null
            ? (last.error ?? "-")
            : String(last.statusCode)
          : "-";
        return [d.eventId, d.type, d.status, String(d.attempts), answer, d.nextAttemptAt ?? "-"];
      }),
    ),
  );
}

/** Runs `rein webhooks SUB ...args`. */
export async function webhooksCommand(
  io: Io,
  flags: ClientFlags,
  args: readonly string[],
  options: WebhookFlags,
): Promise<void> {
  const [sub, target] = args;
  const client = clientOf(flags);
  const need = (what: string): string => {
    if (!target) throw new UsageError(`Missing ${what}: rein webhooks ${sub} ${what}.`);
    return target;
  };
  switch (sub) {
    case "add":
      return add(io, flags, client, need("URL"), options);
    case "list":
      return show(io, flags, client);
    case "remove": {
      const id = need("ID");
      await client.deleteWebhook(id);
      if (flags.json) return json(io, { id, deleted: true });
      io.out(`webhook ${id} removed\n`);
      return;
    }
    case "rotate":
      return rotate(io, flags, client, need("ID"), options.grace);
    case "deliveries":
      return deliveries(io, flags, client, need("ID"), options.limit);
    default:
      throw new UsageError(
        "Usage: rein webhooks add URL --events a,b [--graph g] | list | remove ID | rotate ID [--grace SECONDS] | deliveries ID",
      );
  }
}
