/**
 * bench:page — the workspace page's reads on a small and a large workspace,
 * side by side in one run: each read route (and stats) timed over HTTP
 * against a local server, on workspaces of 1,000 and 100,000 entries shaped
 * like a dependency tree (node_modules/p<i>/f<j>), arms alternated. A route
 * that costs O(page) is flat across the sizes; stats walks the workspace.
 * Then the page itself in chromium: from navigation to the tree's first
 * rows, and to the counts (which wait for stats).
 *
 *   npm run bench:page [-- --samples 7] [-- --quick]   (--quick: 1,000 vs 10,000)
 */
import { chromium } from "playwright-core";
import { encodeCbor } from "../protocol/cbor.ts";
import { sha256 } from "../protocol/hash.ts";
import { markdownTable } from "./lib/results.ts";
import { openSession, runSession } from "./lib/session.ts";
import { fmt, runAlternating, summarize } from "./lib/stats.ts";

/** The page's views timed in the browser (test/node/page.test.ts uses the same chromium). */
const CHROMIUM = "/usr/bin/chromium";
const PAGE_VIEWS = [
  { name: "page in chromium: first rows of the tree", selector: "table.tree td:first-child .name" },
  { name: "page in chromium: the counts", selector: '[data-stat="files"] dd' },
];

const session = openSession("page");
const SIZES = session.quick ? [1000, 10_000] : [1000, 100_000];
const PACK = 10_000;

/** The reads, each the same request on both sizes. */
const ROUTES: readonly { readonly name: string; readonly path: () => string }[] = [
  { name: "tree (root)", path: () => "tree" },
  // Pages both sizes fill: the small workspace's node_modules has ~110 children.
  { name: "tree node_modules, first 100", path: () => "tree?dir=node_modules&limit=100" },
  { name: "tree node_modules, 40 after p50", path: () => "tree?dir=node_modules&after=p50&limit=40" },
  { name: "revs, first 20", path: () => "revs" },
  { name: "versions of README.md", path: () => "versions?path=README.md" },
  { name: "file README.md", path: () => "file?path=README.md" },
  { name: "activity", path: () => "activity" },
  { name: "stats", path: () => "stats" },
];

await runSession(session, async () => {
  const server = await session.startServer();
  const token = server.token();
  const post = async (ws: string, op: string, body: unknown) => {
    const res = await fetch(`${server.url}/v1/workspaces/${ws}/${op}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/cbor" },
      body: encodeCbor(body),
    });
    if (!res.ok) throw new Error(`${op} answered ${res.status}`);
  };
  const bytes = new TextEncoder().encode("x");
  const hash = await sha256(bytes);
  const hostId = crypto.getRandomValues(new Uint8Array(16));

  for (const n of SIZES) {
    const ws = `page-${n}`;
    const file = (path: string, mtime = 0) => ({ path, kind: "file", mode: 0o644, mtime, size: 1, chunks: [hash] });
    const entries: Record<string, unknown>[] = [{ path: "node_modules", kind: "dir", mode: 0o755, mtime: 0 }];
    for (let i = 0; entries.length < n - 1; i++) {
      entries.push({ path: `node_modules/p${i}`, kind: "dir", mode: 0o755, mtime: 0 });
      for (let j = 0; j < 9 && entries.length < n - 1; j++) entries.push(file(`node_modules/p${i}/f${j}`));
    }
    entries.push(file("README.md"));
    let rev = 0;
    const push = async (batch: Record<string, unknown>[]) => {
      await post(ws, "push", {
        hostId,
        start: { rev, path: null },
        end: { rev: rev + 1, path: null },
        entries: batch,
        objects: rev === 0 ? [{ hash, bytes }] : [],
      });
      rev++;
    };
    for (let i = 0; i < entries.length; i += PACK) await push(entries.slice(i, i + PACK));
    for (let k = 1; k <= 3; k++) await push([file("README.md", k)]);
    session.log(`${ws}: ${entries.length} entries in ${rev} revs`);
  }

  const rows: { route: string; small: ReturnType<typeof summarize>; large: ReturnType<typeof summarize> }[] = [];
  const measure = async (name: string, run: (n: number) => Promise<number>) => {
    const arms = SIZES.map((n) => ({ name: String(n), run: () => run(n) }));
    const samples = await runAlternating(arms, { samples: session.samples, warmup: session.warmup });
    const [small, large] = SIZES.map((n) => summarize(samples.get(String(n)) ?? []));
    rows.push({
      route: name,
      small: small as ReturnType<typeof summarize>,
      large: large as ReturnType<typeof summarize>,
    });
    session.log(`${name}: ${fmt(small?.median ?? 0)} ms vs ${fmt(large?.median ?? 0)} ms`);
  };
  for (const route of ROUTES) {
    await measure(route.name, async (n) => {
      const t0 = performance.now();
      const res = await fetch(`${server.url}/v1/workspaces/page-${n}/${route.path()}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`${route.name} on ${n} answered ${res.status}`);
      return performance.now() - t0;
    });
  }

  // The page itself in Debian's chromium: a fresh tab each sample, from navigation to the view drawn.
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
  try {
    for (const view of PAGE_VIEWS) {
      await measure(view.name, async (n) => {
        const tab = await browser.newPage();
        try {
          const t0 = performance.now();
          await tab.goto(`${server.url}/w/page-${n}#token=${token}`);
          await tab.locator(view.selector).first().waitFor();
          return performance.now() - t0;
        } finally {
          await tab.close();
        }
      });
    }
  } finally {
    await browser.close();
  }

  const [a, b] = SIZES.map((n) => n.toLocaleString("en-US"));
  const markdown = markdownTable(
    ["route", `${a} entries, median ms (min-max)`, `${b} entries, median ms (min-max)`, "ratio"],
    rows.map((r) => [
      r.route,
      `${fmt(r.small.median)} (${fmt(r.small.min)}-${fmt(r.small.max)})`,
      `${fmt(r.large.median)} (${fmt(r.large.min)}-${fmt(r.large.max)})`,
      `${fmt(r.large.median / r.small.median)}x`,
    ]),
  );
  session.publish(
    {
      sizes: SIZES,
      rows,
    },
    markdown,
  );
});
