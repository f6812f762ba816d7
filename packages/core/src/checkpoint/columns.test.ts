import { describe, expect, it } from "vitest";
import { makeInterrupt, makeRun, runId, taskId } from "../testing/index.ts";
import {
  interruptBody,
  interruptColumns,
  joinInterrupt,
  joinRun,
  runBody,
  runColumns,
} from "./columns.ts";
import type { StoredInterrupt } from "./types.ts";

/** What a SQL store keeps in an interrupt row's columns, answer columns included. */
const interruptRow = (record: StoredInterrupt) => ({
  ...interruptColumns(record),
  answer: record.answer,
  answered_by: record.answeredBy ?? null,
  answered_at: record.answeredAt ?? null,
});

/** Encodes like a store does: to JSON text and back. */
const roundTrip = <T>(body: T): T => JSON.parse(JSON.stringify(body)) as T;

describe("record bodies", () => {
  it("leave out the asking task's path entry, the columns and the null defaults of an interrupt", () => {
    const record = makeInterrupt("t1", "i1", {
      deadline: "2026-12-01T00:00:00.000Z",
      onTimeout: null,
      answerSchema: null,
    });
    const body = roundTrip(interruptBody(record));
    expect(Object.keys(body).sort()).toEqual(
      ["checkpointId", "kind", "node", "order", "payload", "revision", "slot"].sort(),
    );
    expect(joinInterrupt(body, interruptRow(record))).toEqual({
      ...record,
      onTimeout: undefined,
      answerSchema: undefined,
    });
  });

  it("keep the path entries above the asking task of a sub-agent's interrupt", () => {
    const parent = { runId: runId("root"), graph: "team", node: "research", taskId: taskId("p1") };
    const own = { runId: runId("run-1"), graph: "agent", node: "review", taskId: taskId("task-1") };
    const record = makeInterrupt("t1", "i1", { path: [parent, own], namespace: ["research"] });
    const body = roundTrip(interruptBody(record));
    expect(body).not.toHaveProperty("path");
    expect(body).toHaveProperty("up", [parent]);
    expect(joinInterrupt(body, interruptRow(record))).toEqual(record);
  });

  it("keep a path whose last entry is not the asking task as it is", () => {
    const other = { runId: runId("run-9"), graph: "agent", node: "other", taskId: taskId("x") };
    const record = makeInterrupt("t1", "i1", { path: [other] });
    const body = roundTrip(interruptBody(record));
    expect(body).toHaveProperty("path", [other]);
    expect(joinInterrupt(body, interruptRow(record))).toEqual(record);
  });

  it("read an interrupt and a run encoded whole by an earlier version", () => {
    const record = makeInterrupt("t1", "i1", { deadline: null, onTimeout: null });
    expect(joinInterrupt(roundTrip(record), interruptRow(record))).toEqual(record);
    const run = makeRun("t1", "run-1", { error: null, options: null });
    expect(joinRun(roundTrip(run), runColumns(run))).toEqual(run);
  });

  it("leave out a run's columns and defaults, and rebuild them", () => {
    const run = makeRun("t1", "run-1", { error: null, options: null });
    const body = roundTrip(runBody(run));
    expect(body).toEqual({ graph: "agent" });
    expect(joinRun(body, runColumns(run))).toEqual({
      ...run,
      error: undefined,
      options: undefined,
    });
    const child = makeRun("t1", "run-2", {
      parentRunId: runId("run-1"),
      parentTaskId: taskId("p"),
      namespace: ["research"],
      stream: "research:p",
      error: { name: "Error", message: "boom" },
    });
    expect(joinRun(roundTrip(runBody(child)), runColumns(child))).toEqual(child);
  });
});
