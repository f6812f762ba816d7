import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { apiPlugin } from "./api.ts";
import { consolePlugin } from "./console.ts";
import { featurePlugin } from "./define.ts";

describe("feature plugins", () => {
  it("refuse to load without the decorations they read or the plugins they depend on", async () => {
    const app = Fastify();
    await expect(app.register(apiPlugin)).rejects.toThrow(/'rein' required by 'rein-api'/);
    await app.close();
    const bare = Fastify();
    await expect(bare.register(consolePlugin, { dir: "." })).rejects.toThrow(/rein-http/);
    await bare.close();
  });

  it("refuse to load when they do not add a decoration they declare", async () => {
    const app = Fastify();
    const liar = featurePlugin(
      { name: "liar", decorates: ["promised"], encapsulated: false },
      () => undefined,
    );
    await expect(app.register(liar)).rejects.toThrow(
      "Plugin liar declares the decoration promised but adds none.",
    );
    await app.close();
  });

  it("apply to the whole app unless encapsulated", async () => {
    const app = Fastify();
    const shared = featurePlugin(
      { name: "shared", decorates: ["shared"], encapsulated: false },
      (a) => {
        a.decorate("shared", 1);
      },
    );
    const inner = featurePlugin(
      { name: "inner", decorates: ["inner"], encapsulated: true },
      (a) => {
        a.decorate("inner", 2);
      },
    );
    await app.register(shared);
    await app.register(inner);
    await app.ready();
    expect(app.hasDecorator("shared")).toBe(true);
    expect(app.hasDecorator("inner")).toBe(false);
    await app.close();
  });
});
