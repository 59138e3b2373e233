/**
 * A bad workspace name (PROTOCOL.md §2.1, §5) is `400 invalid_workspace`
 * with the JSON or CBOR error body on every route and method, checked
 * before the route: an encoded `/` in the name is part of the name, never a
 * route under another workspace, and never a 404 or 405.
 */
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CBOR_CONTENT_TYPE, decodeCbor, encodeCbor } from "../../protocol/cbor.ts";
import { signToken } from "../../protocol/token.ts";

const ORIGIN = "http://ferry.test";
const TOKEN = signToken({ ws: "*", rights: "rw", exp: Math.floor(Date.now() / 1000) + 600 }, "test-secret");

/**
 * Names as sent in the path, and the name the server reads from each. (`.`, `..`, `%2e` and `%2e%2e`
 * alone are dot segments: the URL parser removes them before any server sees the path.)
 */
const BAD_NAMES: [sent: string, read: string][] = [
  ["a%2fb", "a/b"],
  ["a%2Fb", "a/b"],
  ["a%2f..", "a/.."],
  ["..%2f..", "../.."],
  ["a%00b", "a\u0000b"],
  ["", ""],
  ["x".repeat(129), "x".repeat(129)],
  ["-a", "-a"],
  [".hidden", ".hidden"],
  ["a%20b", "a b"],
  ["a%5cb", "a\\b"],
  ["%C3%A9t%C3%A9", "été"],
  ["%zz", "%zz"],
];

const ROUTES: [method: string, route: string][] = [
  ["GET", "/stats"],
  ["GET", "/tree"],
  ["GET", "/file?path=a"],
  ["GET", "/versions?path=a"],
  ["GET", "/activity"],
  ["GET", "/revs"],
  ["GET", "/read-token"],
  ["GET", "/check"],
  ["GET", "/sync"],
  ["HEAD", "/stats"],
  ["POST", "/hello"],
  ["POST", "/has"],
  ["POST", "/objects"],
  ["POST", "/objects/get"],
  ["POST", "/push"],
  ["POST", "/changes"],
  ["POST", "/log"],
  ["POST", "/snapshot"],
  ["POST", "/gc"],
  ["DELETE", "?confirm=x"],
  // Routes and methods that do not exist: the name is still checked first.
  ["GET", ""],
  ["PUT", "/push"],
  ["GET", "/hello"],
  ["POST", "/nope"],
];

async function errorOf(res: Response): Promise<{ code: string; workspace?: string } | null> {
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (bytes.byteLength === 0) return null;
  const type = res.headers.get("content-type") ?? "";
  const body = (type.includes("cbor") ? decodeCbor(bytes) : JSON.parse(new TextDecoder().decode(bytes))) as {
    error: { code: string; workspace?: string };
  };
  return body.error;
}

describe("a bad workspace name", () => {
  for (const [sent, read] of BAD_NAMES) {
    it(`is 400 invalid_workspace on every route and method: ${JSON.stringify(sent.slice(0, 20))}`, async () => {
      for (const [method, route] of ROUTES) {
        const res = await SELF.fetch(`${ORIGIN}/v1/workspaces/${sent}${route}`, {
          method,
          headers: {
            authorization: `Bearer ${TOKEN}`,
            "content-type": CBOR_CONTENT_TYPE,
            ...(route === "/sync" ? { upgrade: "websocket" } : {}),
          },
          body: method === "POST" ? encodeCbor({}) : null,
        });
        const where = `${method} ${route}`;
        expect(res.status, where).toBe(400);
        expect(res.headers.get("allow"), where).toBe(null);
        const error = await errorOf(res);
        if (method === "HEAD") continue;
        expect(error, where).toEqual(expect.objectContaining({ code: "invalid_workspace", workspace: read }));
        expect(res.headers.get("content-type"), where).toContain(
          method === "POST" && route !== "/gc" ? "cbor" : "json",
        );
      }
    });
  }

  it("leaves a good name's routes as they were: 404 and 405 for what is no route", async () => {
    const nope = await SELF.fetch(`${ORIGIN}/v1/workspaces/good-name/nope`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(nope.status).toBe(404);
    await nope.arrayBuffer();
    const wrong = await SELF.fetch(`${ORIGIN}/v1/workspaces/good-name/push`, { method: "PUT" });
    expect(wrong.status).toBe(405);
    await wrong.arrayBuffer();
    const list = await SELF.fetch(`${ORIGIN}/v1/workspaces`);
    expect(list.status).toBe(404);
    await list.arrayBuffer();
  });
});
