import { runCheckpointerConformance } from "../testing/index.ts";
import { MemorySaver } from "./memory.ts";

const create = () => Promise.resolve(new MemorySaver());
runCheckpointerConformance({ name: "memory", create, destroy: (saver) => saver.close() });
