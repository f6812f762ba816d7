import { MemorySaver } from "../checkpoint/memory.ts";
import { runRuntimeContracts } from "../testing/runtime/index.ts";

runRuntimeContracts({
  name: "memory",
  create: () => Promise.resolve(new MemorySaver()),
  destroy: (saver) => saver.close(),
});
