/** How numbers, sizes, times and modes read on the page. */
import { formatBytes } from "../../../protocol/human.ts";

/** Sizes as the CLI prints them. */
export const bytes = formatBytes;

export function count(n: number): string {
  return n.toLocaleString("en-US");
}

/** "3 min ago"; `at` is ms since the Unix epoch (0: unknown). */
export function ago(at: number, now = Date.now()): string {
  if (at <= 0) return "before history";
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 45) return "just now";
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const hours = Math.round(m / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.round(hours / 24)} days ago`;
}

export function isoTime(at: number): string {
  return new Date(at).toISOString();
}

export function localTime(at: number): string {
  return new Date(at).toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "short" });
}

/** Permission bits as `rwxr-xr-x`. */
export function mode(bits: number): string {
  const rwx = (b: number) => `${b & 4 ? "r" : "-"}${b & 2 ? "w" : "-"}${b & 1 ? "x" : "-"}`;
  return rwx(bits >> 6) + rwx(bits >> 3) + rwx(bits);
}

export function shortHost(hex: string): string {
  return hex.slice(0, 8);
}

/** A host as the page names it: its label when it has one, else the start of its id or tag (full in the tooltip). */
export function hostName(h: { readonly host: string; readonly label?: string }): HTMLElement {
  const el = document.createElement(h.label === undefined ? "code" : "span");
  el.className = "host";
  el.title = h.host;
  el.textContent = h.label ?? shortHost(h.host);
  return el;
}
