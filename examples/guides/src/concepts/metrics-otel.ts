import { metrics } from "@opentelemetry/api";
import {
  ConsoleMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { createServer, openAuth } from "@rein/server";
import { SqliteSaver } from "@rein/sqlite";
import { graphs } from "./server-graphs.ts";

// Register the provider before creating the server; swap the console for an OTLP exporter.
const exporter = new ConsoleMetricExporter();
metrics.setGlobalMeterProvider(
  new MeterProvider({
    readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 })],
  }),
);

const server = await createServer({ store: SqliteSaver.open("rein.db"), graphs, auth: openAuth() });
console.log(await server.listen({ port: 8080 })); // GET /metrics serves the same values
