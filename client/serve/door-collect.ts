/**
 * The front door's garbage collections (front-door.ts), paced by the bytes
 * it relays and drops, not left to V8: each read is a new buffer outside
 * V8's heap, and V8 paces its collections by its heap, a few MiB here.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/**
 * A young-generation collection after every RELAYED_BETWEEN bytes relayed:
 * left to itself V8 let ~64 MiB of buffers already passed on pile up before
 * collecting them. A scavenge frees them (they die young) in well under a
 * millisecond.
 */
const RELAYED_BETWEEN = 4 * 1024 * 1024;
/**
 * A full collection after every DROPPED_BETWEEN bytes dropped with the
 * connections cut while holding them (held-answers.ts): those buffers waited
 * long enough to be old, which a scavenge leaves, and V8 paces full
 * collections by its own heap of a few MiB, not by them.
 */
const DROPPED_BETWEEN = 4 * 1024 * 1024;

type Collect = (options: { type: "minor" | "major" }) => void;
let collector: Collect | undefined;
let relayedSince = 0;
let droppedSince = 0;

export function relayed(bytes: number): void {
  relayedSince += bytes;
  if (relayedSince < RELAYED_BETWEEN) return;
  relayedSince = 0;
  setImmediate(() => collect()({ type: "minor" }));
}

export function dropped(bytes: number): void {
  droppedSince += bytes;
  if (droppedSince < DROPPED_BETWEEN) return;
  droppedSince = 0;
  setImmediate(() => collect()({ type: "major" }));
}

function collect(): Collect {
  if (collector === undefined) {
    setFlagsFromString("--expose-gc");
    collector = runInNewContext("gc") as Collect;
  }
  return collector;
}
