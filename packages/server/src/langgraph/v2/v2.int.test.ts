/**
 * LangGraph's v2 protocol on `rein serve`, driven by the real `@langchain/langgraph-sdk` 1.15
 * `client.threads.stream()` transport over HTTP, on SQLite and on Postgres: answering one of two
 * parallel sub-agents runs only that one (the other's node count is unchanged, it stays pending
 * and is announced again), other streams hear `input.answered`, `input.inject` steers only its
 * namespace, `agent.getTree` shows paused children as interrupted, and bad commands are 4xx JSON
 * that change nothing.
 */
import { Client } from "@langchain/langgraph-sdk";
import { END, START, StateGraph, append, type Checkpointer } from "@rein/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { graphs } from "../../testing/graphs.ts";
import { sendCommand, type Json } from "../../testing/v2-commands.ts";
import {
  TOKENS,
  client,
  postgresBackend,
  readSse,
  snapshotStore,
  sqliteBackend,
  startTestServer,
  type Backend,
  type TestServer,
  type TestStore,
} from "../../testing/harness.ts";

/** Executions of each sub-agent's asking node, by `thread:agent`. */
const executions = new Map<string, number>();
const executionsOf = (threadId: string, agent: string): number =>
  executions.get(`${threadId}:${agent}`) ?? 0;

/** A sub-agent that counts its asking node's executions and notes the steering it read. */
function subAgent(store: Checkpointer, name: string) {
  return new StateGraph({ notes: append<string>() })
    .addNode("ask", (_s, ctx) => {
      const key = `${String(ctx.threadId)}:${name}`;
      executions.set(key, (executions.get(key) ?? 0) + 1);
      const steering = ctx.steering.map((x) => x.text);
      const answer = ctx.interrupt<string>({ question: `${name}: go ahead?` });
      const steered = steering.length > 0 ? ` [steered: ${steering.join("; ")}]` : "";
      return { notes: `${name}: ${answer}${steered}` };
    })
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile({ checkpointer: store, name });
}

/** `plan`, then two sub-agents in parallel, each pausing on its own question. */
function fanout(store: Checkpointer) {
  return new StateGraph({ notes: append<string>() })
    .addNode("plan", () => ({ notes: "plan" }))
    .addNode("research", subAgent(store, "research"))
    .addNode("refund", subAgent(store, "refund"))
    .addEdge(START, "plan")
    .addEdge("plan", "research")
    .addEdge("plan", "refund")
    .addEdge("research", END)
    .addEdge("refund", END)
    .compile({ checkpointer: store, name: "fanout" });
}

type Tracked = { interruptId: string; namespace: string[]; payload: unknown };

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function suite(backend: Backend): void {
  describe.skipIf(!backend.available)(`LangGraph v2 protocol on ${backend.name}`, () => {
    let store: TestStore;
    let server: TestServer;
    let alice: ReturnType<typeof client>;
    let sdk: Client;
    let base: string;

    beforeEach(async () => {
      executions.clear();
      store = await backend.create();
      server = await startTestServer(store.store, { graphs: { ...graphs, fanout } });
      alice = client(server.url, TOKENS["alice"]!.token);
      base = `${server.url}/langgraph`;
      sdk = new Client({ apiUrl: base, apiKey: TOKENS["alice"]!.token });
    });
    afterEach(async () => {
      await server.close();
      await store.destroy();
    });

    /** A raw command, as the SDK's HTTP transport sends it. */
    const command = (threadId: string, body: unknown) =>
      sendCommand(base, TOKENS["alice"]!.token, threadId, body);

    /** A natively created fan-out thread, paused on both sub-agents through the SDK's transport. */
    /**
     * Another subscriber of the thread's events on `channels`, opened now: `heard` settles with
     * what it hears until the root pauses again after an `input.answered` (a promise in an object,
     * so awaiting the subscription does not wait for the events).
     */
    async function heardUntilPausedAgain(threadId: string, channels: string[]) {
      const observer = await fetch(`${base}/threads/${threadId}/stream/events`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": TOKENS["alice"]!.token },
        body: JSON.stringify({ channels }),
      });
      let answeredSeen = false;
      const heard = readSse(observer, (e) => {
        const data = e.data as { method?: string; params?: { namespace: string[]; data: Json } };
        if (data.method === "input.answered") answeredSeen = true;
        return (
          answeredSeen &&
          data.method === "lifecycle" &&
          data.params?.namespace.length === 0 &&
          data.params.data["event"] === "interrupted"
        );
      });
      return { heard };
    }

    async function pausedFanout(threadId: string) {
      expect((await alice("POST", "/threads", { graph: "fanout", threadId })).status).toBe(201);
      const thread = sdk.threads.stream(threadId, { assistantId: "fanout" });
      await thread.run.start({ input: {} });
      await thread.output;
      await until(() => thread.interrupts.length === 2, "two input.requested events");
      const interrupts = thread.interrupts as Tracked[];
      const at = (agent: string): Tracked => {
        const found = interrupts.find((i) => i.namespace[0] === agent);
        if (!found) throw new Error(`no interrupt of ${agent}`);
        return found;
      };
      return { thread, research: at("research"), refund: at("refund") };
    }

    it("answering one of two parallel interrupts runs only that sub-agent; the other stays pending and is announced again", async () => {
      const { thread, research, refund } = await pausedFanout("t-one");
      expect(thread.interrupted).toBe(true);
      expect(executionsOf("t-one", "research")).toBe(1);
      expect(executionsOf("t-one", "refund")).toBe(1);

      // Another subscriber on the thread, opened after the pause: it must hear the answer.
      const { heard } = await heardUntilPausedAgain("t-one", ["input", "lifecycle"]);

      await thread.input.respond({
        namespace: research.namespace,
        interrupt_id: research.interruptId,
        response: "yes",
      });
      await until(
        () => thread.interrupted && thread.interrupts.length === 1,
        "the sibling announced again",
      );

      // Only the answered sub-agent ran again; the sibling's node did not.
      expect(executionsOf("t-one", "research")).toBe(2);
      expect(executionsOf("t-one", "refund")).toBe(1);
      // The sibling is announced again with the same id, so the client's list stays true.
      expect((thread.interrupts as Tracked[]).map((i) => i.interruptId)).toEqual([
        refund.interruptId,
      ]);
      // ...and Rein agrees it is still pending.
      const native = await alice<{ pendingInterrupts: { id: string }[] }>("GET", "/threads/t-one");
      expect(native.body.pendingInterrupts.map((i) => i.id)).toEqual([refund.interruptId]);

      const events = (await heard).map((e) => e.data as { method: string; params: { data: Json } });
      const answered = events.find((e) => e.method === "input.answered");
      expect(answered?.params.data).toEqual({ interrupt_ids: [research.interruptId] });
      const after = events.slice(events.indexOf(answered!));
      expect(
        after.some(
          (e) =>
            e.method === "input.requested" && e.params.data["interrupt_id"] === refund.interruptId,
        ),
      ).toBe(true);

      // Answering the other finishes the run, the first sub-agent not re-run either.
      await thread.input.respond({
        namespace: refund.namespace,
        interrupt_id: refund.interruptId,
        response: "ok",
      });
      await until(async () => {
        const t = await alice<{ status: string }>("GET", "/threads/t-one");
        return t.body.status === "done";
      }, "the run to finish");
      expect(executionsOf("t-one", "research")).toBe(2);
      expect(executionsOf("t-one", "refund")).toBe(2);
      const state = (await thread.state.get({ namespace: [] })) as { values: { notes: string[] } };
      expect(state.values.notes).toEqual(expect.arrayContaining(["research: yes", "refund: ok"]));
      await thread.close();
    });

    it("a targeted answer streams the answered sub-agent's run to the thread's subscribers", async () => {
      const { thread, research, refund } = await pausedFanout("t-live");
      const { heard } = await heardUntilPausedAgain("t-live", [
        "values",
        "updates",
        "lifecycle",
        "input",
        "tasks",
      ]);
      await thread.input.respond({
        namespace: research.namespace,
        interrupt_id: research.interruptId,
        response: "yes",
      });
      const events = (await heard).map(
        (e) => e.data as { method: string; params: { namespace: string[]; data: Json } },
      );
      // What follows the answer (the stream replayed the run that paused first).
      const answered = events.findIndex((e) => e.method === "input.answered");
      expect(events[answered]?.params.data).toEqual({ interrupt_ids: [research.interruptId] });
      const live = events
        .slice(answered + 1)
        .filter((e) => e.method !== "tasks")
        .map((e) => [e.method, e.params.namespace, e.params.data]);
      // The answered sub-agent's run step by step, under its namespace; the sibling announced
      // again; the sub-agent completed; the root still waiting on the sibling.
      expect(live).toEqual([
        ["lifecycle", [], { event: "running", graph_name: "fanout" }],
        ["lifecycle", ["research"], { event: "started", graph_name: "research" }],
        ["updates", ["research"], { node: "ask", values: { notes: "research: yes" } }],
        ["values", ["research"], { notes: ["plan", "research: yes"] }],
        // The root's step does not commit while the sibling is paused: its values are unchanged.
        ["values", [], { notes: ["plan"] }],
        [
          "input.requested",
          ["refund"],
          { interrupt_id: refund.interruptId, payload: { question: "refund: go ahead?" } },
        ],
        ["lifecycle", ["research"], { event: "completed", graph_name: "research" }],
        ["lifecycle", [], { event: "interrupted", graph_name: "fanout" }],
      ]);
      const tasks = events.slice(answered + 1).filter((e) => e.method === "tasks");
      expect(
        tasks.map((e) => [e.params.namespace, e.params.data["name"], e.params.data["phase"]]),
      ).toEqual([
        [[], "research", "start"],
        [["research"], "ask", "start"],
        [["research"], "ask", "end"],
        [[], "research", "end"],
      ]);
      expect(executionsOf("t-live", "refund")).toBe(1);
      await thread.close();
    });

    it("input.inject is steering delivered only to the targeted namespace, recorded apart", async () => {
      const { thread, research, refund } = await pausedFanout("t-steer");
      await thread.input.inject({
        namespace: ["research"],
        message: { role: "user", content: "cite two sources" },
      });
      const steering = await alice<{ items?: unknown[] }>("GET", "/audit?threadId=t-steer");
      expect(steering.status).toBe(200);
      expect(JSON.stringify(steering.body)).toContain("cite two sources");

      for (const target of [research, refund])
        await thread.input.respond({
          namespace: target.namespace,
          interrupt_id: target.interruptId,
          response: "go",
        });
      await until(async () => {
        const t = await alice<{ status: string }>("GET", "/threads/t-steer");
        return t.body.status === "done";
      }, "the run to finish");
      const state = (await thread.state.get({ namespace: [] })) as { values: { notes: string[] } };
      expect(state.values.notes).toContain("research: go [steered: cite two sources]");
      expect(state.values.notes).toContain("refund: go");
      await thread.close();
    });

    it("agent.getTree reports paused children as interrupted, and a finished one as completed", async () => {
      const { thread, research } = await pausedFanout("t-tree");
      type Node = { namespace: string[]; status: string; graph_name: string; children?: Node[] };
      const tree = ((await thread.agent.getTree()) as { tree: Node }).tree;
      expect(tree.status).toBe("interrupted");
      expect(tree.graph_name).toBe("fanout");
      const children = Object.fromEntries((tree.children ?? []).map((c) => [c.graph_name, c]));
      expect(children["research"]?.status).toBe("interrupted");
      expect(children["refund"]?.status).toBe("interrupted");
      expect(children["research"]?.namespace).toEqual(["research"]);

      await thread.input.respond({
        namespace: research.namespace,
        interrupt_id: research.interruptId,
        response: "yes",
      });
      // The answer is taken once its run got going; the sub-agent finishes after that.
      let next: Node | undefined;
      await until(async () => {
        next = ((await thread.agent.getTree()) as { tree: Node }).tree;
        const research = (next.children ?? []).find((c) => c.graph_name === "research");
        return research?.status === "completed" || research?.status === "failed";
      }, "the answered sub-agent to finish");
      next = next!;
      const after = Object.fromEntries((next.children ?? []).map((c) => [c.graph_name, c]));
      expect(after["research"]?.status).toBe("completed");
      expect(after["refund"]?.status).toBe("interrupted");
      expect(next.status).toBe("interrupted");
      await thread.close();
    });

    it("run.start creates a thread it does not know, with the assistant as its graph, and streams to its end", async () => {
      const thread = sdk.threads.stream("t-fresh", { assistantId: "ask" });
      await thread.run.start({ input: { question: "Ship it?" } });
      await thread.output;
      await until(() => thread.interrupts.length === 1, "the question");
      const [question] = thread.interrupts as Tracked[];
      expect(question?.payload).toEqual({ question: "Ship it?" });
      expect(question?.namespace).toEqual([]);
      await thread.input.respond({
        namespace: [],
        interrupt_id: question!.interruptId,
        response: { text: "ship" },
      });
      // The answer is taken once its run got going; the run ends after that.
      await until(async () => {
        const t = await alice<{ status: string }>("GET", "/threads/t-fresh");
        return t.body.status === "done";
      }, "the answered run to finish");
      const state = (await thread.state.get({ namespace: [] })) as { values: Json };
      expect(state.values["answer"]).toBe("ship");
      const native = await alice<{ graph: string; status: string }>("GET", "/threads/t-fresh");
      expect(native.body.graph).toBe("ask");
      await thread.close();
    });

    it("a paused thread reopened on a restarted server replays its state and pending questions, and can be answered", async () => {
      const first = await pausedFanout("t-reopen");
      await first.thread.close();
      await server.close();
      server = await startTestServer(store.store, { graphs: { ...graphs, fanout } });
      sdk = new Client({ apiUrl: `${server.url}/langgraph`, apiKey: TOKENS["alice"]!.token });
      base = `${server.url}/langgraph`;

      const thread = sdk.threads.stream("t-reopen", { assistantId: "fanout" });
      const seen = await thread.subscribe({ channels: ["values", "input", "lifecycle"] });
      await until(() => thread.interrupts.length === 2, "the pending questions replayed");
      expect(new Set((thread.interrupts as Tracked[]).map((i) => i.interruptId))).toEqual(
        new Set([first.research.interruptId, first.refund.interruptId]),
      );
      expect(thread.interrupted).toBe(true);
      await seen.unsubscribe();

      const answer = await command("t-reopen", {
        id: 3,
        method: "input.respond",
        params: {
          namespace: first.refund.namespace,
          interrupt_id: first.refund.interruptId,
          response: "ok",
        },
      });
      expect(answer.status).toBe(200);
      // The seq before the run: the client takes every later event as live.
      expect((answer.body["meta"] as Json)["applied_through_seq"]).toBeGreaterThan(0);
      expect(executionsOf("t-reopen", "refund")).toBe(2);
      expect(executionsOf("t-reopen", "research")).toBe(1);
      await thread.close();
    });

    it("a batch answers both interrupts in one resume, or none when one id is not pending", async () => {
      const { thread, research, refund } = await pausedFanout("t-batch");
      const before = await snapshotStore(store.store);
      const refused = await command("t-batch", {
        id: 7,
        method: "input.respond",
        params: {
          responses: [
            { namespace: research.namespace, interrupt_id: research.interruptId, response: "a" },
            { namespace: ["refund"], interrupt_id: "i_notAnInterruptOfThis", response: "b" },
          ],
        },
      });
      expect(refused.status).toBe(404);
      expect(refused.body).toMatchObject({ type: "error", id: 7, error: "no_such_interrupt" });
      expect(await snapshotStore(store.store)).toBe(before);
      expect(executionsOf("t-batch", "research")).toBe(1);

      const accepted = await command("t-batch", {
        id: 8,
        method: "input.respond",
        params: {
          responses: [
            { namespace: research.namespace, interrupt_id: research.interruptId, response: "a" },
            { namespace: refund.namespace, interrupt_id: refund.interruptId, response: "b" },
          ],
        },
      });
      expect(accepted.status).toBe(200);
      expect(accepted.body).toMatchObject({ type: "success", id: 8 });
      await until(async () => {
        const t = await alice<{ status: string }>("GET", "/threads/t-batch");
        return t.body.status === "done";
      }, "the run to finish");
      expect(executionsOf("t-batch", "research")).toBe(2);
      expect(executionsOf("t-batch", "refund")).toBe(2);
      await thread.close();
    });

    it("an answer given through Rein's native API reaches open v2 streams as input.answered", async () => {
      const { thread, research, refund } = await pausedFanout("t-native");
      const observer = await fetch(`${base}/threads/t-native/stream/events`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": TOKENS["alice"]!.token },
        body: JSON.stringify({ channels: ["input", "lifecycle"] }),
      });
      let answeredAt = -1;
      const heard = readSse(observer, (e) => {
        const data = e.data as { method?: string; seq: number; params?: { data: Json } };
        if (data.method === "input.answered") answeredAt = data.seq;
        return answeredAt > 0 && data.method === "lifecycle" && data.seq > answeredAt;
      });
      const runs = await alice<{ items: { runId: string; namespace: string[] }[] }>(
        "GET",
        "/threads/t-native/runs",
      );
      const child = runs.body.items.find((r) => r.namespace[0] === "research");
      const answer = await alice("POST", "/threads/t-native/resume", {
        target: { runId: child!.runId, namespace: ["research"], interruptId: research.interruptId },
        resume: "from the console",
      });
      expect(answer.status).toBe(200);
      const events = (await heard).map(
        (e) => e.data as { method: string; seq: number; params: { data: Json } },
      );
      const answered = events.find((e) => e.method === "input.answered");
      expect(answered?.params.data).toEqual({ interrupt_ids: [research.interruptId] });
      const last = events.at(-1);
      expect(last?.params.data["event"]).toBe("interrupted");
      // The sibling was already announced to this stream and is still pending: not repeated.
      expect(
        events.filter(
          (e) =>
            e.seq > answered!.seq &&
            e.method === "input.requested" &&
            e.params.data["interrupt_id"] === refund.interruptId,
        ),
      ).toEqual([]);
      expect(executionsOf("t-native", "refund")).toBe(1);
      await thread.close();
    });

    it("two answers to one interrupt at once: exactly one is applied, the other refused", async () => {
      const { thread, research } = await pausedFanout("t-race");
      const answer = (id: number, response: string) =>
        command("t-race", {
          id,
          method: "input.respond",
          params: { namespace: research.namespace, interrupt_id: research.interruptId, response },
        });
      const replies = await Promise.all([answer(1, "yes"), answer(2, "no")]);
      expect(replies.map((r) => r.status).sort()).toEqual([200, 409]);
      const refused = replies.find((r) => r.status === 409);
      expect(refused?.body["error"]).toBe("no_such_interrupt");
      expect(executionsOf("t-race", "research")).toBe(2);
      expect(executionsOf("t-race", "refund")).toBe(1);
      await thread.close();
    });

    it("two answers to one root question at once: exactly one is applied, the other refused", async () => {
      const thread = sdk.threads.stream("t-root-race", { assistantId: "ask" });
      await thread.run.start({ input: { question: "Ship it?" } });
      await until(() => thread.interrupts.length === 1, "the question");
      const [question] = thread.interrupts as Tracked[];
      const answer = (id: number, text: string) =>
        command("t-root-race", {
          id,
          method: "input.respond",
          params: { namespace: [], interrupt_id: question!.interruptId, response: { text } },
        });
      const replies = await Promise.all([answer(1, "yes"), answer(2, "no")]);
      expect(replies.map((r) => r.status).sort()).toEqual([200, 409]);
      expect(replies.find((r) => r.status === 409)?.body["error"]).toBe("no_such_interrupt");
      await until(async () => {
        const t = await alice<{ status: string }>("GET", "/threads/t-root-race");
        return t.body.status === "done";
      }, "the run to finish");
      const state = (await thread.state.get({ namespace: [] })) as { values: Json };
      const winner = replies[0].status === 200 ? "yes" : "no";
      expect(state.values["answer"]).toBe(winner);
      await thread.close();
    });

    it("bad commands are refused with 4xx protocol errors and change nothing", async () => {
      const { thread, research } = await pausedFanout("t-bad");
      const before = await snapshotStore(store.store);
      const cases: [unknown, number, string][] = [
        ["{not json", 400, "invalid_argument"],
        [{ method: "run.start", params: {} }, 400, "invalid_argument"],
        [{ id: 1, method: "run.launch", params: {} }, 400, "unknown_command"],
        [{ id: 2, method: "run.start", params: { input: {} } }, 400, "invalid_argument"],
        // Plain input to a thread with pending questions is refused, never taken as an answer.
        [
          { id: 3, method: "run.start", params: { assistant_id: "fanout", input: {} } },
          409,
          "invalid_argument",
        ],
        [
          { id: 4, method: "run.start", params: { assistant_id: "ask", input: {} } },
          400,
          "invalid_argument",
        ],
        [
          {
            id: 5,
            method: "input.respond",
            params: { namespace: [], interrupt_id: "i_unknown", response: 1 },
          },
          404,
          "no_such_interrupt",
        ],
        [
          {
            id: 6,
            method: "input.respond",
            params: { namespace: ["refund"], interrupt_id: research.interruptId, response: 1 },
          },
          404,
          "no_such_interrupt",
        ],
        [
          {
            id: 7,
            method: "input.respond",
            params: { namespace: ["research"], interrupt_id: research.interruptId },
          },
          400,
          "invalid_argument",
        ],
        [
          {
            id: 8,
            method: "input.inject",
            params: { namespace: ["nobody"], message: { role: "user", content: "x" } },
          },
          404,
          "no_such_namespace",
        ],
        [
          { id: 9, method: "state.get", params: { namespace: ["nobody"] } },
          404,
          "no_such_namespace",
        ],
        [{ id: 10, method: "agent.getTree", params: { run_id: "nope" } }, 404, "no_such_run"],
        [
          { id: 11, method: "subscription.subscribe", params: { channels: ["values"] } },
          400,
          "not_supported",
        ],
        [{ id: 12, method: "toString", params: {} }, 400, "unknown_command"],
      ];
      for (const [body, status, code] of cases) {
        const reply = await command("t-bad", body);
        expect({ body, status: reply.status, code: reply.body["error"] }).toEqual({
          body,
          status,
          code,
        });
        expect(reply.body["type"]).toBe("error");
        expect(typeof reply.body["message"]).toBe("string");
      }
      // Another tenant's caller does not see the thread at all.
      const bob = await fetch(`${base}/threads/t-bad/commands`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${TOKENS["bob"]!.token}`,
        },
        body: JSON.stringify({ id: 1, method: "state.get", params: { namespace: [] } }),
      });
      expect(bob.status).toBe(404);
      const anonymous = await command("t-bad", { id: 1, method: "state.get", params: {} }).catch(
        () => null,
      );
      expect(anonymous?.status).toBe(200);
      const noKey = await fetch(`${base}/threads/t-bad/commands`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id: 1, method: "state.get", params: {} }),
      });
      expect(noKey.status).toBe(401);
      const badStream = await fetch(`${base}/threads/t-bad/stream/events`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": TOKENS["alice"]!.token },
        body: JSON.stringify({ channels: ["nonsense"] }),
      });
      expect(badStream.status).toBe(400);
      expect(((await badStream.json()) as Json)["error"]).toBe("invalid_argument");
      expect(await snapshotStore(store.store)).toBe(before);

      // An answered interrupt, answered again: refused as no longer pending.
      await thread.input.respond({
        namespace: research.namespace,
        interrupt_id: research.interruptId,
        response: "yes",
      });
      const again = await command("t-bad", {
        id: 13,
        method: "input.respond",
        params: {
          namespace: research.namespace,
          interrupt_id: research.interruptId,
          response: "no",
        },
      });
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ type: "error", id: 13, error: "no_such_interrupt" });
      // The first answer's run ends after it was taken: count once it has.
      await until(async () => {
        const t = await alice<{ status: string }>("GET", "/threads/t-bad");
        return executionsOf("t-bad", "research") >= 2 && t.body.status !== "running";
      }, "the first answer's run to end");
      expect(executionsOf("t-bad", "research")).toBe(2);
      await thread.close();
    });
  });
}

suite(sqliteBackend);
suite(await postgresBackend());
