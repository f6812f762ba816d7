// The first thing every root script with a `pre` hook runs (`npm start`, `npm test`, `npm run
// demo`, the bench): on a Node.js older than `engines.node` of the root package.json it stops
// before installing anything, with one line saying which version is needed and how to get it,
// instead of an install that compiles for minutes and then fails on a missing `node:sqlite`.
// Written for any Node.js that can run an ES module, so that the old one reaches this line.
import { readFileSync } from "node:fs";
import { URL } from "node:url";

const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
const range = manifest.engines.node; // ">=MAJOR.MINOR", e.g. ">=22.13"
const wanted = /^>=(\d+)\.(\d+)$/.exec(range);
if (!wanted) throw new Error(`engines.node must read ">=MAJOR.MINOR", not "${range}"`);
const [major, minor] = process.versions.node.split(".").map(Number);
const [needMajor, needMinor] = [Number(wanted[1]), Number(wanted[2])];
if (major < needMajor || (major === needMajor && minor < needMinor)) {
  console.error(
    `Rein needs Node.js ${needMajor}.${needMinor} or newer (22, 24 or 26); this is ${process.version}. ` +
      `Install a current LTS from https://nodejs.org/ (or run \`nvm install 24\`), then try again.`,
  );
  process.exit(1);
}
