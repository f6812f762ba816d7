import { RunConfig } from "@rein/core";
import { graph } from "./graph.ts";

const paused = await graph.invoke({ topic: "durable agents" }, RunConfig.thread("post-1"));
console.log(paused.status, paused.interrupts[0]?.payload);
