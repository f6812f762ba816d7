import { runCheckpointerConformance } from "@rein/core/testing";
import { SqliteSaver } from "./saver.ts";

const create = () => Promise.resolve(new SqliteSaver({ path: ":memory:" }));
runCheckpointerConformance({ name: "sqlite", create, destroy: (saver) => saver.close() });
