/**
 * Host labels: the readable name a host gives itself at hello (its hostname
 * by default), shown in `/stats` and in the names of its conflict copies
 * (`notes.conflict-<label>-<date>.txt`), so it is safe in a file name on
 * every system. The server keeps labels unique per workspace: a host asking
 * for one another host holds is given `<label>-2`, `-3`...
 */
import { ProtocolError } from "./errors.ts";

export const MAX_LABEL_BYTES = 63;
const LABEL = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

export function isValidLabel(label: string): boolean {
  return LABEL.test(label);
}

export function readLabel(value: unknown, field: string): string {
  if (typeof value === "string" && isValidLabel(value)) return value;
  throw new ProtocolError(
    "bad_request",
    `${field}: expected a label: 1 to 63 of A-Z a-z 0-9 . _ - (starting with a letter or digit)`,
    { field },
  );
}

/** A label made from any name (a hostname): other characters become `-`, cut to the longest label. */
export function toLabel(name: string): string {
  const cleaned = name
    .normalize("NFKD")
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "")
    .slice(0, MAX_LABEL_BYTES);
  return cleaned === "" ? "host" : cleaned;
}

/**
 * A label with the smallest free suffix: `label`, then `label-2`, `label-3`...
 * cut so the suffix still fits. `taken` says whether another host holds one.
 */
export function uniqueLabel(label: string, taken: (candidate: string) => boolean): string {
  for (let n = 1; ; n++) {
    const suffix = n === 1 ? "" : `-${n}`;
    const candidate = label.slice(0, MAX_LABEL_BYTES - suffix.length) + suffix;
    if (!taken(candidate)) return candidate;
  }
}
