/** The workspace at a glance: counts, bytes, current rev, hosts (how far behind each is), and revs and bytes per hour over two days. */
import type { Activity } from "../../../protocol/browse.ts";
import type { Stats } from "./api.ts";
import { h, svg } from "./dom.ts";
import { ago, bytes, count, hostName, isoTime } from "./format.ts";

export function renderOverview(stats: Stats, activity: Activity): HTMLElement {
  // Storage figures come from the collector's usage when the server reports it (PROTOCOL.md §7.1).
  const storage = stats.storage;
  const cards: [string, string, string][] = [
    ["files", "Files", count(stats.files)],
    ["dirs", "Directories", count(stats.dirs)],
    ["symlinks", "Symlinks", count(stats.symlinks)],
    ...(storage
      ? ([
          ["live", "Live bytes", bytes(storage.liveBytes)],
          ["history", "History", bytes(storage.historyBytes)],
          ["stored", "Stored", bytes(storage.storedBytes)],
        ] as [string, string, string][])
      : ([["stored", "Stored", bytes(stats.objectBytes)]] as [string, string, string][])),
    ["rev", "Current rev", count(stats.rev)],
    ["hosts", "Hosts", count(stats.hostCount)],
  ];
  return h(
    "div",
    { class: "overview" },
    h(
      "dl",
      { class: "cards" },
      ...cards.map(([key, label, value]) =>
        h("div", { class: "card", "data-stat": key }, h("dt", {}, label), h("dd", {}, value)),
      ),
    ),
    renderActivity(activity),
    renderHosts(stats),
  );
}

function renderHosts(stats: Stats): HTMLElement {
  if (stats.hosts.length === 0) return h("p", { class: "muted" }, "No host has connected yet.");
  return h(
    "table",
    { class: "hosts" },
    h("caption", {}, "Hosts, most recently seen first"),
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", { scope: "col" }, "Host"),
        h("th", { scope: "col" }, "Last seen"),
        h("th", { scope: "col" }, "Pulled to"),
      ),
    ),
    h(
      "tbody",
      {},
      ...stats.hosts.map((host) => {
        const seen = Date.parse(host.lastSeen);
        return h(
          "tr",
          {},
          h("td", {}, hostName({ host: host.id ?? host.tag ?? "", ...(host.label ? { label: host.label } : {}) })),
          h("td", {}, h("time", { datetime: isoTime(seen), title: host.lastSeen }, ago(seen))),
          h("td", { class: "pulled" }, pulledTo(host.pulled, stats.rev)),
        );
      }),
    ),
  );
}

/** Where a host's pull position is and how many revs came after it (the server hears it at hello, push and pull). */
function pulledTo(pulled: number | undefined, rev: number): HTMLElement | string {
  if (pulled === undefined) return h("span", { class: "muted" }, "not known yet");
  const behind = rev - pulled;
  return `rev ${count(pulled)} (${behind <= 0 ? "up to date" : `${plural(behind, "rev")} behind`})`;
}

const W = 480;
const H = 72;

/** Revs and the bytes they wrote per hour, a bar chart each, with totals in their accessible names. */
function renderActivity(a: Activity): HTMLElement {
  const hours = a.revs.length;
  const revs = a.revs.reduce((s, n) => s + n, 0);
  const entries = a.entries.reduce((s, n) => s + n, 0);
  const written = a.bytes.reduce((s, n) => s + n, 0);
  const when = (i: number) =>
    new Date(a.from + i * a.bucketMs).toLocaleString("en-GB", { dateStyle: "short", timeStyle: "short" });
  return h(
    "figure",
    { class: "chart" },
    renderBars(
      "revs",
      a.revs,
      `${plural(revs, "rev")} writing ${plural(entries, "entry", "entries")} in the last ${hours} hours`,
      (i) => `${when(i)}: ${plural(a.revs[i] ?? 0, "rev")}, ${plural(a.entries[i] ?? 0, "entry", "entries")}`,
    ),
    renderBars(
      "bytes",
      a.bytes,
      `${bytes(written)} of files written in the last ${hours} hours`,
      (i) => `${when(i)}: ${bytes(a.bytes[i] ?? 0)} written`,
    ),
    h("div", { class: "chart-axis", "aria-hidden": "true" }, h("span", {}, `${hours} h ago`), h("span", {}, "now")),
    h(
      "figcaption",
      {},
      `Per hour, last ${hours / 24} days: ${plural(revs, "rev")} (top) writing ${bytes(written)} of files (bottom)` +
        `${a.truncated ? " (busiest part only)" : ""}.`,
    ),
  );
}

function renderBars(
  series: string,
  values: readonly number[],
  summary: string,
  title: (i: number) => string,
): SVGElement {
  const max = Math.max(1, ...values);
  const bw = W / values.length;
  const bars = values.map((n, i) => {
    const bh = n === 0 ? 0 : Math.max(2, (n / max) * (H - 8));
    return svg(
      "rect",
      {
        class: "bar",
        x: (i * bw + 1).toFixed(1),
        y: (H - bh).toFixed(1),
        width: (bw - 2).toFixed(1),
        height: bh.toFixed(1),
      },
      svg("title", {}, title(i)),
    );
  });
  return svg(
    "svg",
    {
      viewBox: `0 0 ${W} ${H}`,
      role: "img",
      "aria-label": summary,
      "data-series": series,
      preserveAspectRatio: "none",
    },
    svg("line", { class: "axis", x1: 0, y1: H - 0.5, x2: W, y2: H - 0.5 }),
    ...bars,
  );
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}
