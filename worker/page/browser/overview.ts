/** The workspace at a glance: counts, bytes, current rev, hosts, and revs per hour over two days. */
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
    renderChart(activity),
    renderHosts(stats),
  );
}

function renderHosts(stats: Stats): HTMLElement {
  if (stats.hosts.length === 0) return h("p", { class: "muted" }, "No host has connected yet.");
  return h(
    "table",
    { class: "hosts" },
    h("caption", {}, "Hosts, most recently seen first"),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Host"), h("th", { scope: "col" }, "Last seen"))),
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
        );
      }),
    ),
  );
}

const W = 480;
const H = 96;

/** Bars of revs per hour, with the entries they wrote in the accessible description. */
function renderChart(a: Activity): HTMLElement {
  const max = Math.max(1, ...a.revs);
  const bw = W / a.revs.length;
  const totalRevs = a.revs.reduce((s, n) => s + n, 0);
  const totalEntries = a.entries.reduce((s, n) => s + n, 0);
  const summary = `${plural(totalRevs, "rev")} writing ${plural(totalEntries, "entry", "entries")} in the last ${a.revs.length} hours`;
  const bars = a.revs.map((n, i) => {
    const bh = n === 0 ? 0 : Math.max(2, (n / max) * (H - 14));
    const hour = new Date(a.from + i * a.bucketMs);
    return svg(
      "rect",
      {
        class: "bar",
        x: (i * bw + 1).toFixed(1),
        y: (H - bh).toFixed(1),
        width: (bw - 2).toFixed(1),
        height: bh.toFixed(1),
      },
      svg(
        "title",
        {},
        `${hour.toLocaleString("en-GB", { dateStyle: "short", timeStyle: "short" })}: ${n} revs, ${a.entries[i]} entries`,
      ),
    );
  });
  return h(
    "figure",
    { class: "chart" },
    svg(
      "svg",
      { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": summary, preserveAspectRatio: "none" },
      svg("line", { class: "axis", x1: 0, y1: H - 0.5, x2: W, y2: H - 0.5 }),
      ...bars,
    ),
    h(
      "div",
      { class: "chart-axis", "aria-hidden": "true" },
      h("span", {}, `${a.revs.length} h ago`),
      h("span", {}, "now"),
    ),
    h(
      "figcaption",
      {},
      `Revs per hour, last ${a.revs.length / 24} days: ${summary}${a.truncated ? " (busiest part only)" : ""}.`,
    ),
  );
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}
