/** Thread leases: one owner at a time, renewal, release and expiry. */
import { expect } from "vitest";
import { CheckpointConflictError, FencedOutError } from "../../errors.ts";
import {
  checkpointId,
  makeCheckpoint,
  makeCommit,
  makeOutcome,
  pausedResult,
  threadId,
} from "../fixtures.ts";
import type { SpecModule } from "../suite.ts";

const T = threadId("t1");
/** Short enough to keep the suite fast, long enough to be unexpired across a few round trips. */
const SHORT_TTL = 250;
const LONG_TTL = 60_000;

/** Specs of the lease methods. */
export const leaseSpecs: SpecModule = {
  concern: "leases",
  register({ spec }) {
    spec(
      "acquireLease takes a free lease and getLease reports owner and expiry",
      async (saver) => {
        expect(await saver.getLease(T)).toBeUndefined();
        const before = Date.now();
        expect(await saver.acquireLease(T, "worker-a", LONG_TTL)).toBeTypeOf("number");
        const lease = await saver.getLease(T);
        expect(lease?.owner).toBe("worker-a");
        const expires = Date.parse(lease?.expiresAt ?? "");
        expect(expires).toBeGreaterThan(before + LONG_TTL - 5_000);
        expect(expires).toBeLessThan(Date.now() + LONG_TTL + 5_000);
      },
      ["leaseStatus"],
    );

    spec(
      "another owner is refused while the lease is unexpired",
      async (saver) => {
        expect(await saver.acquireLease(T, "worker-a", LONG_TTL)).toBeTypeOf("number");
        expect(await saver.acquireLease(T, "worker-b", LONG_TTL)).toBeNull();
        expect((await saver.getLease(T))?.owner).toBe("worker-a");
      },
      ["leaseStatus"],
    );

    spec(
      "the holder may acquire again, which extends its lease",
      async (saver) => {
        expect(await saver.acquireLease(T, "worker-a", 10_000)).toBeTypeOf("number");
        const first = Date.parse((await saver.getLease(T))?.expiresAt ?? "");
        expect(await saver.acquireLease(T, "worker-a", LONG_TTL)).toBeTypeOf("number");
        const second = Date.parse((await saver.getLease(T))?.expiresAt ?? "");
        expect(second).toBeGreaterThan(first);
      },
      ["leaseStatus"],
    );

    spec(
      "an expired lease can be taken by another owner",
      async (saver, time) => {
        expect(await saver.acquireLease(T, "worker-a", SHORT_TTL)).toBeTypeOf("number");
        await time.advance(SHORT_TTL + 150);
        expect(await saver.getLease(T)).toBeUndefined();
        expect(await saver.acquireLease(T, "worker-b", LONG_TTL)).toBeTypeOf("number");
        expect((await saver.getLease(T))?.owner).toBe("worker-b");
        expect(await saver.renewLease(T, "worker-a", LONG_TTL)).toBe(false);
      },
      ["leaseStatus"],
    );

    spec(
      "renewLease extends the holder's lease and refuses anyone else",
      async (saver, time) => {
        expect(await saver.acquireLease(T, "worker-a", SHORT_TTL)).toBeTypeOf("number");
        expect(await saver.renewLease(T, "worker-b", LONG_TTL)).toBe(false);
        expect(await saver.renewLease(T, "worker-a", LONG_TTL)).toBe(true);
        await time.advance(SHORT_TTL + 150);
        // Still held: the renewal moved the expiry.
        expect((await saver.getLease(T))?.owner).toBe("worker-a");
        expect(await saver.acquireLease(T, "worker-b", LONG_TTL)).toBeNull();
      },
      ["leaseStatus"],
    );

    spec(
      "renewLease of an expired lease is refused",
      async (saver, time) => {
        expect(await saver.renewLease(T, "worker-a", LONG_TTL)).toBe(false);
        expect(await saver.acquireLease(T, "worker-a", SHORT_TTL)).toBeTypeOf("number");
        await time.advance(SHORT_TTL + 150);
        expect(await saver.renewLease(T, "worker-a", LONG_TTL)).toBe(false);
        expect(await saver.getLease(T)).toBeUndefined();
      },
      ["leaseStatus"],
    );

    spec(
      "releaseLease frees the holder's lease and ignores other owners",
      async (saver) => {
        expect(await saver.acquireLease(T, "worker-a", LONG_TTL)).toBeTypeOf("number");
        await saver.releaseLease(T, "worker-b");
        expect((await saver.getLease(T))?.owner).toBe("worker-a");
        await saver.releaseLease(T, "worker-a");
        expect(await saver.getLease(T)).toBeUndefined();
        expect(await saver.acquireLease(T, "worker-b", LONG_TTL)).toBeTypeOf("number");
      },
      ["leaseStatus"],
    );

    spec(
      "leases are per thread",
      async (saver) => {
        expect(await saver.acquireLease(T, "worker-a", LONG_TTL)).toBeTypeOf("number");
        expect(await saver.acquireLease(threadId("t2"), "worker-b", LONG_TTL)).toBeTypeOf("number");
        expect((await saver.getLease(threadId("t2")))?.owner).toBe("worker-b");
      },
      ["leaseStatus"],
    );

    spec(
      "concurrent acquisitions of a free lease: exactly one owner wins",
      async (saver) => {
        const owners = ["w1", "w2", "w3", "w4"];
        const results = await Promise.all(owners.map((o) => saver.acquireLease(T, o, LONG_TTL)));
        const winners = results.filter((token) => token !== null);
        expect(winners).toHaveLength(1);
        const lease = await saver.getLease(T);
        expect(lease?.owner).toBe(owners[results.findIndex((token) => token !== null)]);
        expect(lease?.token).toBe(winners[0]);
      },
      ["leaseStatus"],
    );

    spec(
      "every new holder gets a larger fencing token, also after a release",
      async (saver, time) => {
        const first = await saver.acquireLease(T, "worker-a", LONG_TTL);
        await saver.releaseLease(T, "worker-a");
        const second = await saver.acquireLease(T, "worker-b", SHORT_TTL);
        await time.advance(SHORT_TTL + 150);
        const third = await saver.acquireLease(T, "worker-c", LONG_TTL);
        expect(first).toBeTypeOf("number");
        expect(second).toBeGreaterThan(first ?? Infinity);
        expect(third).toBeGreaterThan(second ?? Infinity);
        expect((await saver.getLease(T))?.token).toBe(third);
      },
      ["leaseStatus"],
    );

    spec(
      "a step commit with releaseLease ends the lease in its transaction",
      async (saver) => {
        const token = await saver.acquireLease(T, "worker-a", LONG_TTL);
        const fence = { threadId: T, token: token ?? -1 };
        const c1 = makeCheckpoint("t1", checkpointId(1));
        // A commit that loses its compare-and-set writes nothing, and keeps the lease too.
        await expect(
          saver.commitStep({ ...makeCommit(c1, checkpointId(9)), fence, releaseLease: true }),
        ).rejects.toBeInstanceOf(CheckpointConflictError);
        expect((await saver.getLease(T))?.owner).toBe("worker-a");
        await saver.commitStep({ ...makeCommit(c1, null), fence, releaseLease: true });
        expect(await saver.getLease(T)).toBeUndefined();
        const next = await saver.acquireLease(T, "worker-b", LONG_TTL);
        expect(next).toBeGreaterThan(token ?? Infinity);
      },
      ["leaseStatus"],
    );

    spec(
      "a task outcome with releaseLease ends the lease; a stale one ends nothing",
      async (saver, time) => {
        const first = await saver.acquireLease(T, "worker-a", SHORT_TTL);
        await time.advance(SHORT_TTL + 150);
        const second = await saver.acquireLease(T, "worker-b", LONG_TTL);
        const outcome = makeOutcome("t1", checkpointId(1), pausedResult("task-a"));
        await expect(
          saver.putTaskOutcome({
            ...outcome,
            fence: { threadId: T, token: first ?? -1 },
            releaseLease: true,
          }),
        ).rejects.toBeInstanceOf(FencedOutError);
        expect((await saver.getLease(T))?.owner).toBe("worker-b");
        await saver.putTaskOutcome({
          ...outcome,
          fence: { threadId: T, token: second ?? -1 },
          releaseLease: true,
        });
        expect(await saver.getLease(T)).toBeUndefined();
        expect(await saver.getTaskResults(T, "", checkpointId(1))).toEqual([
          pausedResult("task-a"),
        ]);
      },
      ["leaseStatus"],
    );
  },
};
