/**
 * A child process for the multi-process tests of the SQLite store: opens a file and does one
 * thing, reporting on stdout. Run with `node --import tsx child.ts <mode> <path> [arg]`.
 *
 * - `commit-and-die <path> <n>`: commits n steps, reports the head, then SIGKILLs itself
 *   (no close, no exit handlers: as abrupt as a crash).
 * - `race <path> <checkpoint-n>`: opens, reports `ready`, waits for a line on stdin, then
 *   commits checkpoint n on top of checkpoint 1 and reports `ok` or `conflict`.
 * - `open <path>`: opens (running migrations) and reports the schema version.
 */
import { createInterface } from "node:readline";
import { CheckpointConflictError, type CheckpointId } from "@rein/core";
import { checkpointId, deltaBlob, fullBlob, makeCheckpoint, makeCommit } from "@rein/core/testing";
import { schemaVersion } from "../migrations.ts";
import { SqliteSaver } from "../saver.ts";

const [mode, path, arg] = process.argv.slice(2);
if (!mode || !path) throw new Error("usage: child.ts <mode> <path> [arg]");
const saver = new SqliteSaver({ path });

if (mode === "commit-and-die") {
  let head: CheckpointId | null = null;
  const steps = Number(arg ?? "3");
  for (let n = 1; n <= steps; n += 1) {
    const id = checkpointId(n);
    const blob =
      n === 1 ? fullBlob("log", `v${n}`, [n]) : deltaBlob("log", `v${n}`, `v${n - 1}`, [n]);
    await saver.commitStep(
      makeCommit(
        makeCheckpoint("t1", id, { parentId: head, step: n, versions: { log: `v${n}` } }),
        head,
        {
          blobs: [blob],
        },
      ),
    );
    head = id;
  }
  process.stdout.write(`committed ${head}\n`, () => process.kill(process.pid, "SIGKILL"));
} else if (mode === "race") {
  process.stdout.write("ready\n");
  const lines = createInterface({ input: process.stdin });
  for await (const _line of lines) break;
  process.stdin.destroy();
  try {
    const id = checkpointId(Number(arg));
    await saver.commitStep(
      makeCommit(makeCheckpoint("t1", id, { parentId: checkpointId(1) }), checkpointId(1)),
    );
    process.stdout.write("ok\n");
  } catch (error) {
    process.stdout.write(
      error instanceof CheckpointConflictError ? "conflict\n" : `error ${String(error)}\n`,
    );
  }
  await saver.close();
} else if (mode === "open") {
  process.stdout.write(`version ${schemaVersion(saver.db)}\n`);
  await saver.close();
} else {
  throw new Error(`unknown mode ${mode}`);
}
