// Runs before `npm run changeset`, `npm run release` and `npm run docs:api`: installs the release
// and documentation tools (Changesets, TypeDoc; pinned by tools/package-lock.json), which the root
// install leaves out because only maintainers use them.
import { ci, needsInstall } from "./lib/install.mjs";

if (needsInstall("tools")) await ci("tools");
