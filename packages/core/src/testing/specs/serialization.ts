/** Tagged types (Date, Map, Set, BigInt, Uint8Array) survive every place values are stored. */
import fc from "fast-check";
import { expect } from "vitest";
import { NonSerializableError, SerializationDepthError } from "../../errors.ts";
import { MAX_DEPTH } from "../../serde.ts";
import { nested, storedValue } from "../arbitraries.ts";
import {
  checkpointId,
  deltaBlob,
  fullBlob,
  interruptId,
  makeCheckpoint,
  makeCommit,
  makeInterrupt,
  makeOutcome,
  makeRun,
  makeSteering,
  makeThread,
  pausedResult,
  runId,
  taskId,
  threadId,
  writesResult,
} from "../fixtures.ts";
import type { SpecModule } from "../suite.ts";
import { ROOT_STREAM } from "../../keys.ts";

const T = threadId("t1");
const C1 = checkpointId(1);

/** A value using every tagged type, nested. */
function rich(): Record<string, unknown> {
  return {
    when: new Date("2025-03-04T05:06:07.089Z"),
    lookup: new Map<unknown, unknown>([
      ["a", 1],
      [2, new Set(["x"])],
    ]),
    tags: new Set([1, "two", 3n]),
    huge: 2n ** 70n,
    bytes: new Uint8Array([0, 1, 127, 128, 255]),
    nested: [{ deep: [new Date(0)] }],
    plain: { text: 'héllo ✓ \u0000 "quoted"', n: -1.5 },
  };
}

/** Specs of value round-trips through the serializer. */
export const serializationSpecs: SpecModule = {
  concern: "serialization",
  register({ spec }) {
    spec("the store exposes the serializer it encodes with", async (saver) => {
      const text = saver.serializer.serialize(rich());
      expect(typeof text).toBe("string");
      expect(saver.serializer.deserialize(text)).toEqual(rich());
      await Promise.resolve();
    });

    spec("tagged types round-trip through full and delta blobs", async (saver) => {
      await saver.commitStep(
        makeCommit(makeCheckpoint("t1", C1, { versions: { state: "v1", log: "v1" } }), null, {
          blobs: [fullBlob("state", "v1", rich()), fullBlob("log", "v1", [new Date(1)])],
        }),
      );
      await saver.commitStep(
        makeCommit(makeCheckpoint("t1", checkpointId(2), { versions: { log: "v2" } }), C1, {
          blobs: [deltaBlob("log", "v2", "v1", [rich(), 5n])],
        }),
      );
      expect(await saver.getChannelValues(T, ROOT_STREAM, { state: "v1", log: "v2" })).toEqual({
        state: rich(),
        log: [new Date(1), rich(), 5n],
      });
    });

    spec("tagged types round-trip through checkpoint metadata and Send args", async (saver) => {
      const checkpoint = makeCheckpoint("t1", C1, {
        metadata: { writes: { node: rich() } },
        next: [{ id: taskId("t-send"), node: "worker", trigger: "send:0", arg: rich() }],
      });
      await saver.commitStep(makeCommit(checkpoint, null));
      expect(await saver.getCheckpoint(T, ROOT_STREAM)).toEqual(checkpoint);
    });

    spec("tagged types round-trip through task writes and sends", async (saver) => {
      const result = {
        ...writesResult("task-a", [["state", rich()]]),
        sends: [{ node: "worker", arg: rich() }],
      };
      await saver.putTaskOutcome(makeOutcome("t1", C1, result));
      expect(await saver.getTaskResults(T, "", C1)).toEqual([result]);
    });

    spec(
      "tagged types round-trip through interrupt payloads and answers",
      async (saver) => {
        const row = makeInterrupt("t1", "i1", {
          payload: rich(),
          onTimeout: { kind: "value", value: rich() },
        });
        await saver.putTaskOutcome(
          makeOutcome("t1", C1, pausedResult("task-1"), { interrupts: [row] }),
        );
        expect(await saver.getInterrupt(row.id)).toEqual(row);
        await saver.answerInterrupts({
          threadId: T,
          answers: [{ id: interruptId("i1"), value: rich() }],
          wake: [],
          actor: "alice",
          action: "answer",
        });
        const answered = await saver.getInterrupt(row.id);
        expect(answered?.answer).toEqual(rich());
        expect(answered?.payload).toEqual(rich());
        expect((await saver.listInterrupts({ status: "answered" })).items[0]?.answer).toEqual(
          rich(),
        );
      },
      ["interruptQueue"],
    );

    spec("tagged types round-trip through once values and request results", async (saver) => {
      expect(await saver.putOnce(T, taskId("task-1"), "k", rich())).toEqual({ value: rich() });
      expect(await saver.getOnce(T, taskId("task-1"), "k")).toEqual({ value: rich() });
      const answer = { threadId: T, answers: [], wake: [], actor: "a", action: "answer" as const };
      await saver.answerInterrupts({ ...answer, requestId: "req-1" });
      await saver.putRequestResult("req-1", rich());
      expect(await saver.answerInterrupts({ ...answer, requestId: "req-1" })).toEqual({
        ok: false,
        reason: "duplicate",
        result: rich(),
      });
    });

    spec(
      "tagged types round-trip through thread metadata, runs, steering and audit",
      async (saver) => {
        const thread = makeThread("t1", { metadata: rich() });
        await saver.putThread(thread);
        expect(await saver.getThread(T)).toEqual(thread);
        await saver.appendAudit({
          id: "a1",
          threadId: T,
          runId: runId("run-1"),
          action: "steer",
          actor: "alice",
          data: rich(),
          createdAt: thread.createdAt,
        });
        expect((await saver.listAudit({ threadId: T })).items[0]?.data).toEqual(rich());
        const run = makeRun("t1", "run-1", { error: { name: "E", message: "x" } });
        await saver.putRun(run);
        expect(await saver.getRun(runId("run-1"))).toEqual(run);
        const steering = makeSteering("t1", "s1");
        await saver.appendSteering(steering);
        expect(await saver.listSteering(T)).toEqual([steering]);
      },
      ["auditChain", "steering", "threadCatalog"],
    );

    spec(
      "arbitrary values (tag-shaped objects, holes, undefined, -0, deep nesting, large strings) come back exactly",
      async (saver) => {
        let n = 0;
        await fc.assert(
          fc.asyncProperty(storedValue, async (value) => {
            n += 1;
            const task = taskId(`task-${n}`);
            expect((await saver.putOnce(T, task, "k", value)).value).toStrictEqual(value);
            expect((await saver.getOnce(T, task, "k"))?.value).toStrictEqual(value);
            const row = makeInterrupt("t1", `i${n}`, { payload: value });
            await saver.putTaskOutcome(
              makeOutcome("t1", C1, pausedResult(`task-${n}`), { interrupts: [row] }),
            );
            await saver.answerInterrupts({
              threadId: T,
              answers: [{ id: row.id, value }],
              wake: [],
              actor: "alice",
              action: "answer",
            });
            const stored = await saver.getInterrupt(row.id);
            expect(stored?.payload).toStrictEqual(value);
            expect(stored?.answer).toStrictEqual(value);
          }),
          { numRuns: 60 },
        );
        const deep = nested(MAX_DEPTH - 10);
        const untrusted = { __rein: "bigint", v: "42" };
        // eslint-disable-next-line no-sparse-arrays
        const state = { deep, untrusted, holes: [1, , 3], undef: [undefined], zero: -0 };
        await saver.commitStep(
          makeCommit(makeCheckpoint("t1", C1, { versions: { s: "v1", l: "v1" } }), null, {
            blobs: [fullBlob("s", "v1", state), fullBlob("l", "v1", [untrusted])],
          }),
        );
        await saver.commitStep(
          makeCommit(makeCheckpoint("t1", checkpointId(2), { versions: { l: "v2" } }), C1, {
            blobs: [deltaBlob("l", "v2", "v1", [untrusted, -0, undefined])],
          }),
        );
        expect(await saver.getChannelValues(T, ROOT_STREAM, { s: "v1", l: "v2" })).toStrictEqual({
          s: state,
          l: [untrusted, untrusted, -0, undefined],
        });
      },
      ["interruptQueue"],
    );

    spec(
      "a value nested past the depth limit is a typed error and writes nothing",
      async (saver) => {
        const commit = makeCommit(makeCheckpoint("t1", C1, { versions: { a: "v1" } }), null, {
          blobs: [fullBlob("a", "v1", nested(100_000))],
        });
        await expect(saver.commitStep(commit)).rejects.toBeInstanceOf(SerializationDepthError);
        await expect(
          saver.putOnce(T, taskId("task-1"), "k", { when: new Date(Number.NaN) }),
        ).rejects.toBeInstanceOf(NonSerializableError);
        expect(await saver.getCheckpoint(T, ROOT_STREAM)).toBeUndefined();
        expect(await saver.getOnce(T, taskId("task-1"), "k")).toBeUndefined();
      },
    );

    spec(
      "a value the serializer refuses fails the commit and writes nothing",
      async (saver) => {
        class Opaque {}
        const commit = makeCommit(makeCheckpoint("t1", C1, { versions: { a: "v1" } }), null, {
          blobs: [fullBlob("a", "v1", { fine: 1, bad: new Opaque() })],
          interrupts: [makeInterrupt("t1", "i1")],
        });
        await expect(saver.commitStep(commit)).rejects.toBeInstanceOf(NonSerializableError);
        expect(await saver.getCheckpoint(T, ROOT_STREAM)).toBeUndefined();
        expect(await saver.getInterrupt(interruptId("i1"))).toBeUndefined();
        // The stream is still empty: a corrected first commit goes through.
        await saver.commitStep(makeCommit(makeCheckpoint("t1", C1), null));
        expect((await saver.getCheckpoint(T, ROOT_STREAM))?.id).toBe(C1);
      },
      ["interruptQueue"],
    );
  },
};
