/**
 * `@rein/console` — the approval console, a React page the server serves at `/`. From Node, this
 * module says where the built assets are and builds them when they are missing or older than the
 * sources (what `npm start`, `npm test` and the browser tests rely on).
 *
 * @packageDocumentation
 */
export { consoleDir, consoleIsFresh, ensureConsoleBuilt } from "./build.ts";
