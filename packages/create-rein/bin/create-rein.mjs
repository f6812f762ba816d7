#!/usr/bin/env node
// `npm create rein@latest my-app` runs this: the starter's build scaffolds the app.
import { main } from "../dist/main.js";

process.exitCode = main(process.argv.slice(2), (text) => process.stdout.write(text));
