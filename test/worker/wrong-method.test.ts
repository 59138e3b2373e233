/**
 * Routes and methods (PROTOCOL.md §5): a route that exists answers a wrong
 * method with 405 and an `Allow` header naming the methods it answers; a
 * path that is no route answers 404, page asset names included.
 */
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";

const ORIGIN = "http://ferry.test";
const WS = "/v1/workspaces/methods";

async function errorCode(res: Response): Promise<string> {
  const text = await res.text();
  return res.headers.get("content-type")?.includes("json") ? JSON.parse(text).error.code : text;
}

describe("a wrong method", () => {
  const cases: [method: string, path: string, allow: string][] = [
    ["POST", `${WS}/tree`, "GET, HEAD"],
    ["POST", `${WS}/revs`, "GET, HEAD"],
    ["POST", `${WS}/file`, "GET, HEAD"],
    ["POST", `${WS}/versions`, "GET, HEAD"],
    ["POST", `${WS}/activity`, "GET, HEAD"],
    ["POST", `${WS}/read-token`, "GET, HEAD"],
    ["POST", `${WS}/stats`, "GET, HEAD"],
    ["POST", `${WS}/sync`, "GET, HEAD"],
    ["PUT", `${WS}/push`, "POST"],
    ["GET", `${WS}/objects/get`, "POST"],
    ["GET", `${WS}/gc`, "POST"],
    ["GET", WS, "DELETE"],
    ["POST", "/v1/health", "GET, HEAD"],
    ["POST", "/", "GET, HEAD"],
    ["DELETE", "/w/methods", "GET, HEAD"],
  ];
  for (const [method, path, allow] of cases) {
    it(`answers ${method} ${path} with 405 and Allow: ${allow}`, async () => {
      const res = await SELF.fetch(`${ORIGIN}${path}`, { method });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe(allow);
      await res.arrayBuffer();
    });
  }

  it("answers a path that is no route with 404 and no Allow", async () => {
    for (const [method, path] of [
      ["POST", `${WS}/nope`],
      ["GET", `${WS}/nope`],
      ["GET", "/v2/health"],
    ] as const) {
      const res = await SELF.fetch(`${ORIGIN}${path}`, { method });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.headers.get("allow")).toBe(null);
      await res.arrayBuffer();
    }
  });
});

describe("page assets", () => {
  for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"]) {
    it(`answers /page/${name}, a name on the object prototype, with 404 and no cache`, async () => {
      const res = await SELF.fetch(`${ORIGIN}/page/${name}`);
      expect(res.status).toBe(404);
      expect(res.headers.get("cache-control")).toBe(null);
      expect(await errorCode(res)).toBe("not_found");
    });
  }
});
