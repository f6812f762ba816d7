/** Channel values by version: full blobs, delta chains rebuilt, branches, streams. */
import { expect } from "vitest";
import { ReinError } from "../../errors.ts";
import type { ChannelBlob, Checkpointer } from "../../checkpoint/types.ts";
import type { CheckpointId } from "../../ids.ts";
import {
  checkpointId,
  deltaBlob,
  fullBlob,
  makeCheckpoint,
  makeCommit,
  threadId,
} from "../fixtures.ts";
import type { SpecModule } from "../suite.ts";
import { ROOT_STREAM } from "../../keys.ts";

const T = threadId("t1");

/** Commits checkpoint c(n) on `stream` referencing `versions`, writing `blobs`. */
async function commit(
  saver: Checkpointer,
  n: number,
  head: CheckpointId | null,
  versions: Record<string, string>,
  blobs: ChannelBlob[],
  stream: string = ROOT_STREAM,
): Promise<CheckpointId> {
  const id = checkpointId(n);
  await saver.commitStep(
    makeCommit(makeCheckpoint("t1", id, { stream, parentId: head, versions }), head, { blobs }),
  );
  return id;
}

/** Specs of channel blobs and getChannelValues. */
export const channelBlobSpecs: SpecModule = {
  concern: "channel-blobs",
  register({ spec }) {
    spec("a full blob is read back by its version", async (saver) => {
      await commit(saver, 1, null, { topic: "v1", count: "v1" }, [
        fullBlob("topic", "v1", "refunds"),
        fullBlob("count", "v1", { n: 3, list: [1, 2] }),
      ]);
      expect(await saver.getChannelValues(T, ROOT_STREAM, { topic: "v1", count: "v1" })).toEqual({
        topic: "refunds",
        count: { n: 3, list: [1, 2] },
      });
    });

    spec(
      "each version keeps its own value: an old checkpoint reads its old value",
      async (saver) => {
        const c1 = await commit(saver, 1, null, { topic: "v1" }, [fullBlob("topic", "v1", "a")]);
        await commit(saver, 2, c1, { topic: "v2" }, [fullBlob("topic", "v2", "b")]);
        expect(await saver.getChannelValues(T, ROOT_STREAM, { topic: "v1" })).toEqual({
          topic: "a",
        });
        expect(await saver.getChannelValues(T, ROOT_STREAM, { topic: "v2" })).toEqual({
          topic: "b",
        });
      },
    );

    spec("an unchanged channel keeps pointing at the version written earlier", async (saver) => {
      const c1 = await commit(saver, 1, null, { a: "v1", b: "v1" }, [
        fullBlob("a", "v1", "a1"),
        fullBlob("b", "v1", "b1"),
      ]);
      // Step 2 rewrites only `a`; the checkpoint still references b@v1.
      await commit(saver, 2, c1, { a: "v2", b: "v1" }, [fullBlob("a", "v2", "a2")]);
      const head = await saver.getCheckpoint(T, ROOT_STREAM);
      expect(head?.versions).toEqual({ a: "v2", b: "v1" });
      expect(await saver.getChannelValues(T, ROOT_STREAM, head?.versions ?? {})).toEqual({
        a: "a2",
        b: "b1",
      });
    });

    spec("a delta chain full → delta → delta rebuilds the concatenated array", async (saver) => {
      const c1 = await commit(saver, 1, null, { messages: "v1" }, [
        fullBlob("messages", "v1", [{ role: "user", text: "hi" }]),
      ]);
      const c2 = await commit(saver, 2, c1, { messages: "v2" }, [
        deltaBlob("messages", "v2", "v1", [{ role: "ai", text: "hello" }]),
      ]);
      await commit(saver, 3, c2, { messages: "v3" }, [
        deltaBlob("messages", "v3", "v2", [
          { role: "user", text: "refund" },
          { role: "ai", text: "ok" },
        ]),
      ]);
      expect(await saver.getChannelValues(T, ROOT_STREAM, { messages: "v3" })).toEqual({
        messages: [
          { role: "user", text: "hi" },
          { role: "ai", text: "hello" },
          { role: "user", text: "refund" },
          { role: "ai", text: "ok" },
        ],
      });
      expect(await saver.getChannelValues(T, ROOT_STREAM, { messages: "v2" })).toEqual({
        messages: [
          { role: "user", text: "hi" },
          { role: "ai", text: "hello" },
        ],
      });
    });

    spec("a long delta chain rebuilds every item in order", async (saver) => {
      let head = await commit(saver, 1, null, { log: "v1" }, [fullBlob("log", "v1", [])]);
      for (let n = 2; n <= 60; n += 1) {
        head = await commit(saver, n, head, { log: `v${n}` }, [
          deltaBlob("log", `v${n}`, `v${n - 1}`, [n]),
        ]);
      }
      const values = await saver.getChannelValues(T, ROOT_STREAM, { log: "v60" });
      expect(values["log"]).toEqual(Array.from({ length: 59 }, (_, i) => i + 2));
    });

    spec("two deltas on the same prev (a branch) each rebuild their own lineage", async (saver) => {
      const c1 = await commit(saver, 1, null, { messages: "v1" }, [
        fullBlob("messages", "v1", ["root"]),
      ]);
      const c2 = await commit(saver, 2, c1, { messages: "v2" }, [
        deltaBlob("messages", "v2", "v1", ["main"]),
      ]);
      // A fork from c1: a second delta on v1.
      const c3 = await commit(saver, 3, c2, { messages: "v3" }, [
        deltaBlob("messages", "v3", "v1", ["fork"]),
      ]);
      await commit(saver, 4, c3, { messages: "v4" }, [
        deltaBlob("messages", "v4", "v3", ["fork-2"]),
      ]);
      expect(await saver.getChannelValues(T, ROOT_STREAM, { messages: "v2" })).toEqual({
        messages: ["root", "main"],
      });
      expect(await saver.getChannelValues(T, ROOT_STREAM, { messages: "v4" })).toEqual({
        messages: ["root", "fork", "fork-2"],
      });
    });

    spec(
      "chains named as the runtime names them (`<id>~<depth>`) rebuild, on a line and across a fork",
      async (saver) => {
        // The runtime's version names: a full value is its checkpoint id, a delta adds its depth.
        const v = (n: number, depth = 0) =>
          depth === 0 ? `${checkpointId(n)}` : `${checkpointId(n)}~${depth}`;
        const c1 = await commit(saver, 1, null, { m: v(1) }, [fullBlob("m", v(1), ["a"])]);
        const c2 = await commit(saver, 2, c1, { m: v(2, 1) }, [
          deltaBlob("m", v(2, 1), v(1), ["b"]),
        ]);
        const c3 = await commit(saver, 3, c2, { m: v(3, 2) }, [
          deltaBlob("m", v(3, 2), v(2, 1), ["c"]),
        ]);
        // A fork from c2 whose versions interleave with the first branch's.
        const c4 = await commit(saver, 4, c3, { m: v(4, 2) }, [
          deltaBlob("m", v(4, 2), v(2, 1), ["x"]),
        ]);
        const c5 = await commit(saver, 5, c4, { m: v(5, 3) }, [
          deltaBlob("m", v(5, 3), v(4, 2), ["y"]),
        ]);
        // A snapshot then a delta on it: the chain stops at the newest full value.
        const c6 = await commit(saver, 6, c5, { m: v(6) }, [fullBlob("m", v(6), ["s"])]);
        await commit(saver, 7, c6, { m: v(7, 1) }, [deltaBlob("m", v(7, 1), v(6), ["t"])]);
        const read = async (version: string) =>
          (await saver.getChannelValues(T, ROOT_STREAM, { m: version }))["m"];
        expect(await read(v(3, 2))).toEqual(["a", "b", "c"]);
        expect(await read(v(5, 3))).toEqual(["a", "b", "x", "y"]);
        expect(await read(v(7, 1))).toEqual(["s", "t"]);
        expect(await read(v(2, 1))).toEqual(["a", "b"]);
      },
    );

    spec("getChannelValues returns only the channels asked for", async (saver) => {
      await commit(saver, 1, null, { a: "v1", b: "v1" }, [
        fullBlob("a", "v1", 1),
        fullBlob("b", "v1", 2),
      ]);
      expect(await saver.getChannelValues(T, ROOT_STREAM, { b: "v1" })).toEqual({ b: 2 });
      expect(await saver.getChannelValues(T, ROOT_STREAM, {})).toEqual({});
    });

    spec("falsy values (0, false, empty string, null) round-trip", async (saver) => {
      await commit(saver, 1, null, { z: "v1", f: "v1", e: "v1", n: "v1" }, [
        fullBlob("z", "v1", 0),
        fullBlob("f", "v1", false),
        fullBlob("e", "v1", ""),
        fullBlob("n", "v1", null),
      ]);
      expect(
        await saver.getChannelValues(T, ROOT_STREAM, { z: "v1", f: "v1", e: "v1", n: "v1" }),
      ).toEqual({
        z: 0,
        f: false,
        e: "",
        n: null,
      });
    });

    spec(
      "blobs belong to their stream: the same version in two streams holds two values",
      async (saver) => {
        await commit(saver, 1, null, { a: "v1" }, [fullBlob("a", "v1", "root")], "");
        await commit(saver, 2, null, { a: "v1" }, [fullBlob("a", "v1", "child")], "child");
        expect(await saver.getChannelValues(T, ROOT_STREAM, { a: "v1" })).toEqual({ a: "root" });
        expect(await saver.getChannelValues(T, "child", { a: "v1" })).toEqual({ a: "child" });
      },
    );

    spec("a version that was never stored is a not_found error", async (saver) => {
      await commit(saver, 1, null, { a: "v1" }, [fullBlob("a", "v1", 1)]);
      const error: unknown = await saver
        .getChannelValues(T, ROOT_STREAM, { a: "v9" })
        .catch((e: unknown) => e);
      expect(ReinError.is(error) && error.code).toBe("not_found");
    });
  },
};
