/**
 * bench:live — time from a one-file write on host A to the file on host B's
 * disk, over WebSocket sync (median and p95, loopback). It needs WebSocket
 * sync in the client (`ferry sync --watch`); until that lands it says so and
 * exits without a figure.
 *
 *   npm run bench:live
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { REPO_DIR } from "./lib/results.ts";

const WS_TRANSPORT = ["client/transport/ws.ts", "client/transports/ws.ts", "client/transport/websocket.ts"];
const found = WS_TRANSPORT.find((p) => existsSync(join(REPO_DIR, p)));
if (found === undefined) {
  process.stdout.write(
    "bench:live: not measured yet. It needs WebSocket sync in the client (ferry sync --watch), which has not landed.\n" +
      "Bar 7 (a one-file change on host A on host B's disk in under 50 ms, median, loopback) is unmeasured.\n",
  );
} else {
  process.stdout.write(`bench:live: a WebSocket transport exists (${found}) but this benchmark is not written yet.\n`);
}
