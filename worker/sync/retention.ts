/**
 * What a workspace keeps, and for how long (README.md "Retention",
 * PROTOCOL.md §7.9). Set by Worker variables (wrangler.toml `[vars]`); the
 * collector (worker/sync/gc/) reads them on every run, so a change takes
 * effect at the next collection without touching stored data.
 */
import { ProtocolError } from "../../protocol/errors.ts";
import { parseDuration, RETENTION_VARS } from "../../protocol/retention.ts";

export interface Retention {
  /** Previous versions of a path (overwritten or deleted) stay this long after they were replaced. */
  readonly historyMs: number;
  /** An uploaded object no entry or retained version names stays this long: any push in flight finishes. */
  readonly graceMs: number;
  /** A tombstone stays this long; a host whose pull cursor is older resyncs at hello. */
  readonly horizonMs: number;
  /**
   * A pack in R2 nothing wants stays this long, condemned, before its bytes
   * are deleted (worker/sync/gc/): longer than any push or download, so
   * one that found its chunks indexed finishes, and one that names them
   * brings the pack back. An object in R2 no pack row names (an upload
   * not recorded yet) is kept as long.
   */
  readonly packGraceMs: number;
}

const SECOND = 1000;
const HOUR = 3600 * SECOND;
const DAY = 24 * HOUR;

export const DEFAULT_RETENTION: Retention = {
  historyMs: 7 * DAY,
  graceMs: HOUR,
  horizonMs: 30 * DAY,
  packGraceMs: DAY,
};

export type RetentionVars = { readonly [K in (typeof RETENTION_VARS)[keyof Retention]]?: string | undefined };

/**
 * The retention the variables set, defaults where unset. A value that is
 * not a duration is `unavailable` naming the variable: collecting with a
 * guessed setting could delete what the operator meant to keep, so the
 * collector does not run until it is fixed.
 */
export function readRetention(vars: RetentionVars): Retention | ProtocolError {
  const historyMs = readVar(vars, "historyMs");
  if (historyMs instanceof ProtocolError) return historyMs;
  const graceMs = readVar(vars, "graceMs");
  if (graceMs instanceof ProtocolError) return graceMs;
  const horizonMs = readVar(vars, "horizonMs");
  if (horizonMs instanceof ProtocolError) return horizonMs;
  const packGraceMs = readVar(vars, "packGraceMs");
  if (packGraceMs instanceof ProtocolError) return packGraceMs;
  return { historyMs, graceMs, horizonMs, packGraceMs };
}

function readVar(vars: RetentionVars, field: keyof Retention): number | ProtocolError {
  const name = RETENTION_VARS[field];
  const text = vars[name];
  if (text === undefined || text.trim() === "") return DEFAULT_RETENTION[field];
  return (
    parseDuration(text) ??
    new ProtocolError(
      "unavailable",
      `server misconfigured: ${name}='${text}' is not a duration (seconds, or a number with s, m, h or d)`,
      { variable: name },
    )
  );
}
