/** The errors of `@rein/mcp`'s tools. */

/**
 * The error of a call the server answered with `isError`, or could not finish (its text is what
 * the model reads).
 */
export class McpToolError extends Error {
  constructor(
    readonly tool: string,
    message: string,
  ) {
    super(message);
    this.name = "McpToolError";
  }
}
