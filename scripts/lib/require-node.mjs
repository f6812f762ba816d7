// The first thing every root script with a `pre` hook runs (`npm start`, `npm test`, `npm run
// demo`, the bench): on a Node.js older than `engines.node` of the root package.json it stops
// before installing anything, with one line saying which version is needed and how to get it,
// instead of an install that ends in a missing `node:sqlite`. Written for any Node.js that can
// run an ES module, so that an old one reaches the line.
import { readFileSync } from "node:fs";
import { URL } from "node:url";

/**
 * The line to print when Node.js `version` ("20.20.2") is below `range` (">=22.13", the only
 * shape the manifests use), or null when it is supported.
 */
export function nodeVersionProblem(version, range) {
  const wanted = /^>=(\d+)\.(\d+)$/.exec(range);
  if (!wanted) throw new Error(`engines.node must read ">=MAJOR.MINOR", not "${range}"`);
  const [major, minor] = version.replace(/^v/, "").split(".").map(Number);
  const [needMajor, needMinor] = [Number(wanted[1]), Number(wanted[2])];
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return null;
  return (
    `Rein needs Node.js ${needMajor}.${needMinor} or newer (22, 24 or 26); this is v${version.replace(/^v/, "")}. ` +
    "Install a current LTS from https://nodejs.org/ (or run `nvm install 24`), then try again."
  );
}

const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
const problem = nodeVersionProblem(process.versions.node, manifest.engines.node);
if (problem) {
  console.error(problem);
  process.exit(1);
}
