/**
 * `rein keys create|list|revoke`: a tenant's API keys, through the `/api-keys` routes (an admin
 * token).
 */
import type { ApiKey } from "@rein/client";
import { clientOf, type ClientFlags } from "./commands.ts";
import { table, type Io } from "./output.ts";
import { UsageError } from "./serve.ts";

/** The flags of `rein keys`. */
export interface KeyFlags {
  /** `--name NAME`. */
  name?: string | undefined;
  /** `--scopes read,resume`. */
  scopes?: string | undefined;
  /** `--expires ISO-8601` or `--expires 30d` (days from now; also `h`, `m`). */
  expires?: string | undefined;
  /** `--tenant T` (open mode only). */
  tenant?: string | undefined;
}

/** An expiry flag as an ISO time: a time as given, or `<n>d|h|m` from now. */
export function expiryOf(text: string, now = new Date()): string {
  const relative = /^(\d+)([dhm])$/.exec(text);
  if (relative) {
    const unit = { d: 86_400_000, h: 3_600_000, m: 60_000 }[relative[2] as "d" | "h" | "m"];
    return new Date(now.getTime() + Number(relative[1]) * unit).toISOString();
  }
  const at = new Date(text);
  if (Number.isNaN(at.getTime()))
    throw new UsageError(
      `--expires takes an ISO-8601 time or a duration like 30d, 12h, 90m (got ${JSON.stringify(text)}).`,
    );
  return at.toISOString();
}

function json(io: Io, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}

const row = (k: ApiKey): string[] => [
  k.id,
  k.name,
  k.scopes.join(","),
  k.expiresAt ?? "never",
  k.revokedAt ? `revoked ${k.revokedAt}` : "active",
  k.lastUsedAt ?? "-",
];

/** Runs `rein keys SUB ...args`. */
export async function keysCommand(
  io: Io,
  flags: ClientFlags,
  args: readonly string[],
  options: KeyFlags,
): Promise<void> {
  const [sub, target] = args;
  const client = clientOf(flags);
  switch (sub) {
    case "create": {
      const name = options.name ?? target;
      const scopes = (options.scopes ?? "")
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      if (!name || scopes.length === 0)
        throw new UsageError(
          "Usage: rein keys create --name NAME --scopes read,resume [--expires 30d].",
        );
      const created = await client.createApiKey({
        name,
        scopes: scopes as ApiKey["scopes"],
        ...(options.tenant ? { tenant: options.tenant } : {}),
        ...(options.expires ? { expiresAt: expiryOf(options.expires) } : {}),
      });
      if (flags.json) return json(io, created);
      io.out(
        `key ${created.id} (${created.name}) of ${created.tenant}: ${created.scopes.join(",")}\n`,
      );
      io.out(`${created.key}\n(shown only now: the server keeps its digest)\n`);
      return;
    }
    case "list": {
      const keys = await client.listApiKeys();
      if (flags.json) return json(io, keys);
      io.out(table(["KEY", "NAME", "SCOPES", "EXPIRES", "STATUS", "LAST USED"], keys.map(row)));
      return;
    }
    case "revoke": {
      if (!target) throw new UsageError("Missing ID: rein keys revoke ID (the rein_... prefix).");
      const revoked = await client.revokeApiKey(target);
      if (flags.json) return json(io, revoked);
      io.out(`key ${revoked.id} revoked at ${revoked.revokedAt}\n`);
      return;
    }
    default:
      throw new UsageError(
        "Usage: rein keys create --name NAME --scopes read,resume [--expires 30d] | list | revoke ID",
      );
  }
}
