/**
 * `npm run build:if-stale -w @rein/console`: builds the console when `dist` is missing or older
 * than its sources. The root `pretest` and `prestart` run it, so a fresh clone's `npm test` and
 * `npm start` serve a current console.
 */
import { consoleDir, ensureConsoleBuilt } from "./build.ts";

if (await ensureConsoleBuilt()) console.log(`Built the approval console into ${consoleDir}`);
