import { describe, expect, it } from "vitest";
import { freshWorkspace, helloRequest, metered, ok, randomId, refused, stats } from "../helpers.ts";

export function labelsSuite(): void {
  describe("host labels at hello", () => {
    it("gives a host the label it asks for and shows it in stats", async () => {
      const ws = freshWorkspace();
      const answer = await ok(ws, "hello", helloRequest(randomId(), { label: "build-box" }));
      expect(answer.label).toBe("build-box");
      const s = (await stats(ws)) as { hosts: { label?: string }[] };
      expect(s.hosts.map((h) => h.label)).toEqual(["build-box"]);
    });

    it("keeps labels unique in a workspace: another host asking for a held one gets the next free suffix", async () => {
      const ws = freshWorkspace();
      const a = randomId();
      const b = randomId();
      const c = randomId();
      expect((await ok(ws, "hello", helloRequest(a, { label: "laptop" }))).label).toBe("laptop");
      expect((await ok(ws, "hello", helloRequest(b, { label: "laptop" }))).label).toBe("laptop-2");
      expect((await ok(ws, "hello", helloRequest(c, { label: "laptop" }))).label).toBe("laptop-3");
      // Each keeps its own on the next hello, and another workspace is another namespace.
      expect((await ok(ws, "hello", helloRequest(b, { label: "laptop" }))).label).toBe("laptop-2");
      expect((await ok(freshWorkspace(), "hello", helloRequest(b, { label: "laptop" }))).label).toBe("laptop");
    });

    it("writes nothing for a repeated hello with the same label, and answers the held one without asking", async () => {
      const ws = freshWorkspace();
      const host = randomId();
      await ok(ws, "hello", helloRequest(host, { label: "ci-runner" }));
      const again = await metered(ws, () => ok(ws, "hello", helloRequest(host, { label: "ci-runner" })));
      expect(again.rowsWritten).toBe(0);
      expect((await ok(ws, "hello", helloRequest(host))).label).toBe("ci-runner");
      expect((await ok(ws, "hello", helloRequest(host, { label: "renamed" }))).label).toBe("renamed");
    });

    it("records no host and takes no label for a look (status, a dry run), and answers the label held", async () => {
      const ws = freshWorkspace();
      const looker = randomId();
      const looked = await metered(ws, () => ok(ws, "hello", helloRequest(looker, { label: "laptop", look: true })));
      expect(looked.rowsWritten).toBe(0);
      expect(((await stats(ws)) as { hostCount: number }).hostCount).toBe(0);
      // The label is still free for the host that syncs.
      const host = randomId();
      expect((await ok(ws, "hello", helloRequest(host, { label: "laptop" }))).label).toBe("laptop");
      const again = await ok(ws, "hello", helloRequest(host, { label: "renamed", look: true }));
      expect(again.label).toBe("laptop");
      expect(((await stats(ws)) as { hosts: { label?: string }[] }).hosts.map((h) => h.label)).toEqual(["laptop"]);
    });

    it("refuses a label that is not safe in a file name, and records nothing", async () => {
      const ws = freshWorkspace();
      for (const label of ["", "-x", "a/b", "a b", "é", "x".repeat(64), 7]) {
        const r = await refused(ws, "hello", helloRequest(randomId(), { label }));
        expect(r.status).toBe(400);
        expect(r.error.code).toBe("bad_request");
      }
      expect(((await stats(ws)) as { hostCount: number }).hostCount).toBe(0);
    });
  });
}
