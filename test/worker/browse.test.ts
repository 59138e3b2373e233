import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { TreeChild, TreePage } from "../../protocol/browse.ts";
import type { FileEntry } from "../../protocol/entry.ts";
import { sha256, toHex } from "../../protocol/hash.ts";
import type { ObjectBlob } from "../../protocol/objects.ts";
import { signToken } from "../../protocol/token.ts";
import { MAX_ROWS_PER_PAGE } from "../../worker/sync/list-dir.ts";
import { blob, dir, gone, metered, smallFile, symlink, TestHost, type Workspace } from "./helpers.ts";

const BASE = "http://ferry.test/v1/workspaces";
let counter = 0;

/** A fresh workspace by name (the routes take a name) and its object. */
function named(): { name: string; ws: Workspace } {
  const name = `browse-${Date.now()}-${counter++}`;
  return { name, ws: env.WORKSPACE.get(env.WORKSPACE.idFromName(name)) };
}

function readToken(ws: string): string {
  return signToken({ ws, rights: "r", exp: Math.floor(Date.now() / 1000) + 600 }, env.FERRY_SECRET as string);
}

function get(name: string, route: string, params: Record<string, string> = {}, token = readToken(name)) {
  const query = new URLSearchParams(params).toString();
  return SELF.fetch(`${BASE}/${name}/${route}${query ? `?${query}` : ""}`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
}

async function tree(name: string, params: Record<string, string> = {}): Promise<TreePage> {
  const res = await get(name, "tree", params);
  expect(res.status).toBe(200);
  return (await res.json()) as TreePage;
}

/** Every child of `dirPath`, following pages of `limit`. */
async function listAll(name: string, dirPath: string, limit: number): Promise<TreeChild[]> {
  const out: TreeChild[] = [];
  let after: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const page = await tree(name, { dir: dirPath, limit: String(limit), ...(after === null ? {} : { after }) });
    out.push(...page.children);
    if (page.next === null) return out;
    after = page.next;
  }
  throw new Error("too many pages");
}

function files(paths: readonly string[], object: ObjectBlob): FileEntry[] {
  return paths.map((path) => ({
    kind: "file",
    path,
    mode: 0o644,
    mtime: 1_700_000_000_000,
    size: 6,
    chunks: [object.hash],
  }));
}

describe("tree", () => {
  it("lists a directory's live children with their metadata, in name order", async () => {
    const { name, ws } = named();
    const host = new TestHost(ws);
    const readme = await smallFile("src/README.md", "hello\n", 0o600);
    await host.push(
      [dir("src"), readme.entry, dir("src/lib"), symlink("src/link", "lib"), dir("src/old"), dir("top")],
      [readme.object],
    );
    await host.push([gone("src/old")]);
    const page = await tree(name, { dir: "src" });
    expect(page).toEqual({
      dir: "src",
      children: [
        { name: "README.md", kind: "file", rev: 1, mode: 0o600, mtime: 1_700_000_000_000, size: 6 },
        { name: "lib", kind: "dir", rev: 1, mode: 0o755, mtime: 1_700_000_000_000 },
        { name: "link", kind: "symlink", rev: 1, target: "lib" },
      ],
      next: null,
    });
    expect((await tree(name)).children.map((c) => c.name)).toEqual(["src", "top"]);
  });

  it("pages children whose names sort between a directory and its subtree, each once", async () => {
    const { name, ws } = named();
    const object = await blob("shared");
    // Byte order: "a" < "a-b" < "a.b" < "a.b/x" < "a/x" < "a0": siblings interleave with subtrees.
    await new TestHost(ws).push(
      [
        dir("d"),
        dir("d/a"),
        ...files(["d/a-b", "d/a.b/x", "d/a/x", "d/a/y/z", "d/a0", "d/b"], object),
        dir("d/a.b"),
        dir("d/a/y"),
      ],
      [object],
    );
    const expected = ["a", "a-b", "a.b", "a0", "b"];
    for (const limit of [1, 2, 3, 10]) {
      expect((await listAll(name, "d", limit)).map((c) => c.name)).toEqual(expected);
    }
  });

  it("reads a page in proportion to the page, not to the subtrees it skips", async () => {
    const { name, ws } = named();
    const object = await blob("shared");
    const deep = Array.from({ length: 3000 }, (_, i) => `big/deep/f${String(i).padStart(5, "0")}`);
    await new TestHost(ws).push([dir("big"), dir("big/deep"), ...files(["a", ...deep, "z"], object)], [object]);
    let page: TreePage | undefined;
    const meter = await metered(ws, async () => {
      page = await tree(name);
    });
    expect(page?.children.map((c) => c.name)).toEqual(["a", "big", "z"]);
    // Three seeks of at most 32 rows: one per child with a subtree, and one to the end.
    expect(meter.statements).toBeLessThanOrEqual(8);
    expect(meter.rowsRead).toBeLessThanOrEqual(4 * 32);
  });

  it("answers a short page with next when a directory is mostly tombstones", async () => {
    const { name, ws } = named();
    const object = await blob("shared");
    const host = new TestHost(ws);
    const many = Array.from({ length: MAX_ROWS_PER_PAGE + 10 }, (_, i) => `t/${String(i).padStart(5, "0")}`);
    await host.push([dir("t"), ...files([...many, "t/zz"], object)], [object]);
    await host.push(many.map(gone));
    const first = await tree(name, { dir: "t" });
    expect(first.children).toEqual([]);
    expect(first.next).not.toBeNull();
    expect((await listAll(name, "t", 10)).map((c) => c.name)).toEqual(["zz"]);
  });

  it("refuses a bad dir, after or limit with the field named, and no token with 401", async () => {
    const { name } = named();
    const codes = async (params: Record<string, string>) => {
      const res = await get(name, "tree", params);
      return [res.status, ((await res.json()) as { error: { code: string; field?: string } }).error];
    };
    expect(await codes({ dir: "../etc" })).toEqual([400, expect.objectContaining({ code: "invalid_path" })]);
    expect(await codes({ dir: "/abs" })).toEqual([400, expect.objectContaining({ code: "invalid_path" })]);
    expect(await codes({ after: "a/b" })).toEqual([
      400,
      expect.objectContaining({ code: "bad_request", field: "after" }),
    ]);
    expect(await codes({ limit: "0" })).toEqual([
      400,
      expect.objectContaining({ code: "bad_request", field: "limit" }),
    ]);
    expect(await codes({ limit: "1001" })).toEqual([
      400,
      expect.objectContaining({ code: "bad_request", field: "limit" }),
    ]);
    expect(await codes({ limit: "-1" })).toEqual([
      400,
      expect.objectContaining({ code: "bad_request", field: "limit" }),
    ]);
    expect((await get(name, "tree", {}, "")).status).toBe(401);
    expect((await get(name, "tree", {}, readToken("someone-else"))).status).toBe(403);
  });
});

describe("file", () => {
  it("streams a file's bytes assembled from chunks in shared, solo and inline storage", async () => {
    const { name, ws } = named();
    const parts = [new Uint8Array(300_000).fill(1), new Uint8Array(40).fill(2), new Uint8Array(5000).fill(3)];
    for (let i = 0; i < 300_000; i++) (parts[0] as Uint8Array)[i] = (i * 7) & 0xff;
    const objects = await Promise.all(parts.map(async (bytes) => ({ hash: await sha256(bytes), bytes })));
    const size = parts.reduce((n, p) => n + p.byteLength, 0);
    const chunks = [...objects, ...objects].map((o) => o.hash);
    const entry: FileEntry = { kind: "file", path: "bin/data ü.bin", mode: 0o644, mtime: 0, size: 2 * size, chunks };
    await new TestHost(ws).push([dir("bin"), entry], objects);

    const res = await get(name, "file", { path: "bin/data ü.bin" });
    expect(res.status).toBe(200);
    const body = new Uint8Array(await res.arrayBuffer());
    const expected = new Uint8Array(2 * size);
    let at = 0;
    for (const p of [...parts, ...parts]) {
      expected.set(p, at);
      at += p.byteLength;
    }
    // Compared by hash: a deep equality over 600 KB of bytes takes seconds.
    expect(body.byteLength).toBe(expected.byteLength);
    expect(toHex(await sha256(body))).toBe(toHex(await sha256(expected)));
    expect(res.headers.get("content-type")).toBe("application/octet-stream");
    expect(res.headers.get("content-disposition")).toBe(
      `attachment; filename="data _.bin"; filename*=UTF-8''data%20%C3%BC.bin`,
    );
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("content-security-policy")).toContain("sandbox");
  });

  it("serves an HTML file as an attachment with its type, never inline", async () => {
    const { name, ws } = named();
    const page = await smallFile("x.html", "<script>alert(1)</script>");
    await new TestHost(ws).push([page.entry], [page.object]);
    const res = await get(name, "file", { path: "x.html" });
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment;/);
    expect(await res.text()).toBe("<script>alert(1)</script>");
  });

  it("answers not_found for a missing path, a directory and a deleted file", async () => {
    const { name, ws } = named();
    const host = new TestHost(ws);
    const f = await smallFile("f", "bytes");
    await host.push([dir("d"), f.entry], [f.object]);
    await host.push([gone("f")]);
    for (const path of ["nope", "d", "f"]) {
      const res = await get(name, "file", { path });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { code: string; path: string } }).error).toMatchObject({
        code: "not_found",
        path,
      });
    }
    const missing = await get(name, "file", {});
    expect(missing.status).toBe(400);
  });
});
