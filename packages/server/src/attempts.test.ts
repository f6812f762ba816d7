import { describe, expect, it } from "vitest";
import { AttemptCursor, resumePoint, wireId } from "./attempts.ts";

const ev = (id: number, event = "updates", data: unknown = {}) => ({ id, event, data });

describe("AttemptCursor: a joined stream across attempts of its run", () => {
  it("follows the first attempt seen, sending each id once, in its numbering", () => {
    const c = new AttemptCursor(0);
    expect(c.replayRequest()).toEqual({ after: 0 });
    expect(c.admit("t1.a")).toBe("follow");
    expect(c.take(ev(1))).toEqual({ send: true, id: "t1.a:1" });
    expect(c.take(ev(2))).toEqual({ send: true, id: "t1.a:2" });
    expect(c.take(ev(2))).toEqual({ send: false });
    expect(c.replayRequest()).toEqual({ after: 2, attempt: "t1.a" });
    expect(c.overtaken).toBe(false);
  });

  it("a later attempt while the followed one has not ended is ahead: held, and the followed one asked for", () => {
    const c = new AttemptCursor(0);
    c.admit("t1.a");
    c.take(ev(1));
    c.take(ev(2));
    // Its ids restart at 1: they used to be dropped as already delivered, silently.
    expect(c.admit("t2.b")).toBe("ahead");
    expect(c.overtaken).toBe(true);
    // The replay asked for is the rest of the followed attempt.
    expect(c.replayRequest()).toEqual({ after: 2, attempt: "t1.a" });
    // Its rest comes, ending because its process lost the database: the later one goes on.
    expect(c.admit("t1.a")).toBe("follow");
    expect(c.take(ev(3))).toEqual({ send: true, id: "t1.a:3" });
    expect(c.take(ev(4, "error", { error: "store_unavailable" }))).toEqual({ send: false });
    expect(c.admit("t2.b")).toBe("follow");
    expect(c.overtaken).toBe(false);
    expect(c.replayRequest()).toEqual({ after: 0, attempt: "t2.b" });
    expect(c.take(ev(1))).toEqual({ send: true, id: "t2.b:1" });
  });

  it("an earlier attempt's events (a finished hub answering a replay) are ignored", () => {
    const c = new AttemptCursor(0);
    c.admit("t2.b");
    c.take(ev(1));
    expect(c.admit("t1.a")).toBe("ignore");
    expect(c.overtaken).toBe(false);
  });

  it("before anything was delivered, a later attempt is followed instead", () => {
    const c = new AttemptCursor(0);
    c.admit("t1.a");
    expect(c.admit("t2.b")).toBe("follow");
    expect(c.replayRequest()).toEqual({ after: 0, attempt: "t2.b" });
  });

  it("an attempt ended by losing the database, or handed back, is followed by the next, ids naming it", () => {
    for (const code of ["store_unavailable", "fenced_out", "handed_over"]) {
      const c = new AttemptCursor(0);
      c.admit("t1.a");
      c.take(ev(1));
      c.take(ev(2));
      expect(c.take(ev(3, "error", { error: code }))).toEqual({ send: false });
      expect(c.admit("t2.b")).toBe("follow");
      expect(c.last).toBe(0);
      expect(c.take(ev(1))).toEqual({ send: true, id: "t2.b:1" });
      expect(c.take(ev(2, "end"))).toEqual({ send: true, id: "t2.b:2" });
    }
  });

  it("any other error of the attempt is sent (the stream ends with it), and a later attempt stays ahead", () => {
    const c = new AttemptCursor(0);
    c.admit("t1.a");
    expect(c.take(ev(1, "error", { error: "node_failed" }))).toEqual({ send: true, id: "t1.a:1" });
    expect(c.admit("t2.b")).toBe("ahead");
  });

  it("events of processes that name no attempt are followed by id, as before", () => {
    const c = new AttemptCursor(5);
    expect(c.admit(undefined)).toBe("follow");
    expect(c.take(ev(5))).toEqual({ send: false });
    expect(c.take(ev(6))).toEqual({ send: true, id: 6 });
    expect(c.replayRequest()).toEqual({ after: 6 });
  });

  it("resuming with an id that names its attempt: a later attempt is ahead, the same one goes on after it", () => {
    const c = new AttemptCursor(7, "t1.a");
    expect(c.replayRequest()).toEqual({ after: 7, attempt: "t1.a" });
    // The run was taken over while the client was away: the later attempt's 1..7 are not its 1..7.
    expect(c.admit("t2.b")).toBe("ahead");
    expect(c.overtaken).toBe(true);
    const same = new AttemptCursor(7, "t1.a");
    expect(same.admit("t1.a")).toBe("follow");
    expect(same.take(ev(7))).toEqual({ send: false });
    expect(same.take(ev(8))).toEqual({ send: true, id: "t1.a:8" });
  });
});

describe("event ids on the wire", () => {
  const attempt = "0mi3x2k1z.AbC-d_9x";
  it("name the attempt and the place in it, and read back", () => {
    expect(wireId(attempt, 12)).toBe(`${attempt}:12`);
    expect(resumePoint(`${attempt}:12`)).toEqual({ after: 12, attempt });
  });
  it("a plain number (an earlier version's id) names no attempt", () => {
    expect(wireId(undefined, 3)).toBe(3);
    expect(resumePoint("42")).toEqual({ after: 42 });
    expect(resumePoint(["5", "6"])).toEqual({ after: 5 });
  });
  it("anything else resumes from the start", () => {
    for (const bad of [
      undefined,
      "",
      "0",
      "-3",
      "abc",
      "x:5",
      `${attempt}:`,
      `${attempt}:1.5`,
      `a:b:${attempt}`,
    ])
      expect(resumePoint(bad), String(bad)).toEqual({ after: 0 });
  });
});
