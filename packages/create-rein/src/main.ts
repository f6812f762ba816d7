/**
 * `npm create rein@latest [folder]`: scaffolds an app and says what to run next.
 */
import { relative } from "node:path";
import { ScaffoldError, scaffold } from "./scaffold.ts";

/** Runs the starter with `argv` (the arguments after the command). Resolves with the exit code. */
export function main(argv: readonly string[], print: (text: string) => void): number {
  const [target = "my-rein-app", ...rest] = argv.filter((a) => a !== "--");
  if (target.startsWith("-") || rest.length > 0) {
    print("Usage: npm create rein@latest [folder]\n");
    return 2;
  }
  try {
    const app = scaffold(target);
    const where = relative(process.cwd(), app.dir) || ".";
    print(
      `Created ${app.name} in ${where}: a support agent that asks before it refunds.\n\n` +
        `  cd ${where}\n  npm install\n  npm start    # the approval console at http://127.0.0.1:8080\n\n` +
        "Sign in with the token in tokens.json. npm test runs the agent's tests.\n",
    );
    return 0;
  } catch (error) {
    if (!(error instanceof ScaffoldError)) throw error;
    print(`create-rein: ${error.message}\n`);
    return 1;
  }
}
