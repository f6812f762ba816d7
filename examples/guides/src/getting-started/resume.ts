import { Command, RunConfig } from "@rein/core";
import { graph } from "./graph.ts";

// Another process, minutes or days later: the same file, the same graph, and the answer.
const done = await graph.resume(RunConfig.thread("post-1"), Command.resume(true));
console.log(done.status, done.values.log);
