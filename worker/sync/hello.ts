/** hello: version check, then the comparison of sync positions that makes a restore one round trip. */

import { wholeRevsThrough } from "../../protocol/cursor.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import type { HelloRequest, HelloResponse } from "../../protocol/hello.ts";
import { LIMITS } from "../../protocol/limits.ts";
import { CAPABILITIES, HTTP_UPLOADS, MIN_PROTOCOL_VERSION, PROTOCOL_VERSION } from "../../protocol/version.ts";
import type { Db, SyncContext } from "./db.ts";
import { deletedAt, workspaceDeleted } from "./deleted-histories.ts";
import { readTombstonesDropped } from "./gc/summary.ts";
import { readCurrentRev } from "./history.ts";
import { assignLabel, readAcked, readLabel, recordSeen } from "./hosts.ts";
import { readEpoch } from "./meta.ts";
import { positionLost } from "./position.ts";

/** One seek on the objects' primary key. */
function holdsObjects(db: Db): boolean {
  return db.exec(`SELECT 1 AS held FROM objects LIMIT 1`).rows.length > 0;
}

export function hello({ db, now, readOnly, packStore }: SyncContext, req: HelloRequest): HelloResponse | ProtocolError {
  if (req.version < MIN_PROTOCOL_VERSION || req.version > PROTOCOL_VERSION) {
    return new ProtocolError(
      "unsupported_version",
      `protocol version ${req.version} is not supported; this server speaks ${MIN_PROTOCOL_VERSION} to ${PROTOCOL_VERSION}`,
      { min: MIN_PROTOCOL_VERSION, max: PROTOCOL_VERSION },
    );
  }
  return db.transaction(() => {
    const epoch = readEpoch(db);
    const rev = readCurrentRev(db);
    // A host that synced a history this workspace deleted (its position, or
    // with none its id, says so): it would push its tree back into what a
    // person just deleted. Refused, recording nothing, unless the host says
    // it starts the workspace again (§4.1, §7.10).
    const deleted = req.recreate === true ? null : deletedAt(db, req.hostId, req.pull);
    if (deleted !== null) return workspaceDeleted(deleted);
    const acked = readAcked(db, req.hostId);
    // A position that cannot be resumed (position.ts): the host reconciles its whole state.
    const dropped = readTombstonesDropped(db);
    const lost = req.pull === undefined ? null : positionLost(db, req.pull, { epoch, rev, dropped }, "required");
    const otherHistory = lost === "other-history" || lost === "other-rev";
    const pastHorizon = lost === "past-horizon";
    // A read-only hello, or a look (status, a dry run), writes nothing: it is told the label it holds, if any.
    const records = !readOnly && req.look !== true;
    // How far the host has pulled, for stats (a position in another history says nothing of this one).
    const pulled = req.pull !== undefined && !otherHistory ? wholeRevsThrough(req.pull.cursor) : undefined;
    if (records) recordSeen(db, req.hostId, now(), pulled);
    const label =
      req.label !== undefined && records ? assignLabel(db, req.hostId, req.label) : readLabel(db, req.hostId);
    return {
      version: req.version,
      epoch,
      rev,
      acked,
      resync: otherHistory || pastHorizon,
      limits: LIMITS,
      // With R2, bytes over HTTP: the Worker takes them there, a socket frame's only the object can (§7.9).
      capabilities: packStore?.takesUploads ? [...CAPABILITIES, HTTP_UPLOADS] : [...CAPABILITIES],
      ...(label !== undefined ? { label } : {}),
      ...(dropped > 0 ? { tombstonesDropped: dropped } : {}),
      // Only the horizon: the host's saved states are true, and it may trust them (§9.3).
      ...(pastHorizon ? { horizon: true } : {}),
      // Nothing pushed yet, yet objects held: a first push was cut after some uploads, and its rerun probes (§9.2).
      ...(rev === 0 && holdsObjects(db) ? { holdsObjects: true } : {}),
      // A host mints its own tokens by this clock, not its own, which may be off (§6).
      time: now(),
    };
  });
}
