// Runs before `npm run bench` and `npm run test:bench`: installs the bench's own dependencies
// (LangGraph.js, LangChain core, langsmith and their checkpointers, pinned by
// bench/package-lock.json), which the root install leaves out. Rein's SQLite store needs no
// native code (node:sqlite), but LangGraph.js's SQLite saver depends on better-sqlite3, so this
// install compiles it where no prebuilt binary downloads (1-3 minutes, once per install).
import "./lib/require-node.mjs";
import { ci, needsInstall } from "./lib/install.mjs";

if (needsInstall(".")) await ci(".");
if (needsInstall("bench")) await ci("bench");
