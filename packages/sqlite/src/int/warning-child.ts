/**
 * Child of `warnings.int.test.ts`: opens a SqliteSaver on the file in argv, writes and reads a
 * run, closes it, then emits an unrelated experimental warning, which must still be printed
 * (the store silences its own driver's warning only).
 */
import { makeRun, runId } from "@rein/core/testing";
import { SqliteSaver } from "../saver.ts";

const [path] = process.argv.slice(2);
if (!path) throw new Error("usage: warning-child.ts <db-path>");
const saver = SqliteSaver.open(path);
await saver.putRun(makeRun("t1", "run-1"));
process.stdout.write(`${(await saver.getRun(runId("run-1")))?.status ?? "missing"}\n`);
await saver.close();
process.emitWarning("Something else is an experimental feature", "ExperimentalWarning");
