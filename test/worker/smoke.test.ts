import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";

describe("toolchain", () => {
  it("runs SQL in a durable object", async () => {
    const stub = env.WORKSPACE.get(env.WORKSPACE.idFromName("x"));
    const one = await runInDurableObject(stub, (o) => (o as unknown as { ping(): number }).ping());
    expect(one).toBe(1);
  });
});
