/**
 * `rein audit verify` and `rein audit export`: the provable audit log from the command line.
 * Through a server by default (`GET /audit/verify`, `GET /audit/export`); with `--db` or
 * `--postgres`, straight on the store, for an auditor who holds the database but runs no server.
 */
import type { AuditVerification } from "@rein/client";
import { clientOf, type ClientFlags } from "./commands.ts";
import { ExitCode, type Io } from "./output.ts";
import { storeOptions } from "./serve.ts";
import { openStore } from "../store.ts";
import { threadIdOf } from "../ids.ts";

/** Flags of the audit commands. */
export interface AuditFlags {
  thread?: string | undefined;
  tenant?: string | undefined;
  /** Verify or export straight on a store instead of through a server. */
  db?: string | undefined;
  postgres?: string | undefined;
  schema?: string | undefined;
  /** The HMAC key of signed heads, for the store mode (a server uses its own). */
  auditKey?: string | undefined;
}

function scopeOf(flags: AuditFlags): { threadId?: string; tenant?: string } {
  return {
    ...(flags.thread !== undefined ? { threadId: flags.thread } : {}),
    ...(flags.tenant !== undefined ? { tenant: flags.tenant } : {}),
  };
}

function direct(flags: AuditFlags): boolean {
  return flags.db !== undefined || flags.postgres !== undefined;
}

/** Runs `body` on the store the flags name, closing it after. */
async function onStore<T>(
  flags: AuditFlags,
  body: (store: Awaited<ReturnType<typeof openStore>>["store"]) => Promise<T>,
): Promise<T> {
  const opened = await openStore(storeOptions(flags));
  try {
    return await body(opened.store);
  } finally {
    await opened.store.close();
  }
}

/** The sentence `rein audit verify` prints for a result. */
export function verificationLine(result: AuditVerification): string {
  const legacy = result.legacy > 0 ? `; ${result.legacy} older entries predate the chain` : "";
  const signed = result.signed
    ? `; ${result.signed.checked} signed heads checked, ${result.signed.written} signed`
    : "";
  if (result.ok)
    return `OK: audit chain verified: ${result.checked} entries in ${result.chains} chains${legacy}${signed}\n`;
  const broken = result.firstBroken;
  return `BROKEN: ${broken?.message ?? "the audit chain does not verify"}\n${
    broken
      ? `  thread ${broken.threadId}  entry ${broken.n ?? "-"}  seq ${broken.seq ?? "-"}  record ${broken.id ?? "-"}  reason ${broken.reason}\n`
      : ""
  }`;
}

/**
 * `rein audit verify [--thread T] [--tenant T]`: exits 0 when every chain verifies, and
 * {@link ExitCode.BROKEN} naming the first broken link when one does not.
 */
export async function auditVerifyCommand(
  io: Io,
  flags: ClientFlags,
  audit: AuditFlags,
): Promise<number> {
  const scope = scopeOf(audit);
  const result: AuditVerification = direct(audit)
    ? await onStore(audit, (store) =>
        store.verifyAudit({
          ...(scope.threadId !== undefined ? { threadId: threadIdOf(scope.threadId) } : {}),
          ...(scope.tenant !== undefined ? { tenant: scope.tenant } : {}),
          ...(audit.auditKey ? { key: audit.auditKey } : {}),
        }),
      )
    : await clientOf(flags).verifyAudit(scope);
  io.out(flags.json ? `${JSON.stringify(result, null, 2)}\n` : verificationLine(result));
  return result.ok ? ExitCode.OK : ExitCode.BROKEN;
}

/** `rein audit export [--thread T] [--tenant T]`: the audit lines with their hashes, JSON Lines. */
export async function auditExportCommand(
  io: Io,
  flags: ClientFlags,
  audit: AuditFlags,
): Promise<number> {
  const scope = scopeOf(audit);
  if (!direct(audit)) {
    for await (const line of clientOf(flags).exportAudit(scope))
      io.out(`${JSON.stringify(line)}\n`);
    return ExitCode.OK;
  }
  await onStore(audit, async (store) => {
    let cursor: string | null = null;
    do {
      const page = await store.listAuditChain({
        ...(scope.threadId !== undefined ? { threadId: threadIdOf(scope.threadId) } : {}),
        ...(scope.tenant !== undefined ? { tenant: scope.tenant } : {}),
        limit: 1000,
        cursor,
      });
      for (const line of page.items) {
        let record: unknown = null;
        try {
          record = store.serializer.deserialize(line.content);
        } catch {
          // Exported as stored: the verifier needs the content, not the record.
        }
        io.out(`${JSON.stringify({ ...line, record })}\n`);
      }
      cursor = page.nextCursor;
    } while (cursor !== null);
  });
  return ExitCode.OK;
}
