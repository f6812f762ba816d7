// A store's test file: the runtime suite against fresh stores of yours (here the memory store
// seen through the runtime members only, as core's own runtime-only test runs it).
import { MemorySaver } from "@rein/core";
import { runRuntimeStoreConformance, runtimeOnly } from "@rein/core/testing";

runRuntimeStoreConformance({
  name: "mine",
  create: () => Promise.resolve(runtimeOnly(new MemorySaver())),
  destroy: () => Promise.resolve(),
});
