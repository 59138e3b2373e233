/** Human output: byte sizes, durations, and the one-line summary of a sync. */
import { formatBytes } from "../../protocol/human.ts";
import type { SyncReport } from "../engine/report.ts";

export { formatBytes };

export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

/** A retention figure as stats sends it (`"7200s"`) in its largest whole unit: `2h`, `30d`, `0s`. */
export function formatSeconds(figure: string): string {
  const seconds = Number.parseInt(figure, 10);
  for (const [unit, size] of [
    ["d", 86_400],
    ["h", 3600],
    ["m", 60],
  ] as const) {
    if (seconds > 0 && seconds % size === 0) return `${seconds / size}${unit}`;
  }
  return `${seconds}s`;
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** `sent 12 entries (3.4 MiB), received 0 entries (0 B), 4 round trips, 120 ms` */
export function summaryLine(verb: string, r: SyncReport): string {
  return (
    `${verb}: sent ${plural(r.entriesSent, "entry").replace("entrys", "entries")} (${formatBytes(r.objectBytesSent)}), ` +
    `received ${plural(r.entriesReceived, "entry").replace("entrys", "entries")} (${formatBytes(r.objectBytesReceived)}), ` +
    `${plural(r.roundTrips, "round trip")}, ${formatMs(r.ms)}`
  );
}
