/**
 * The object's own CPU in a local server, where the Worker, the workspace
 * object and the local R2 bucket share workerd's one thread (so the
 * process's CPU cannot tell them apart): the server runs with
 * FERRY_METER_OBJECT=1 (client/serve/object-meter.ts), which logs the spans
 * during which some call into the object was unsettled, and this samples the
 * runtime's CPU (schedstat, ns, every thread) about every millisecond, then
 * sums the CPU that fell inside those spans. What a span holds besides the
 * object's work is waiting (a body streaming in, the disk), which costs no
 * CPU; and whatever else ran on the thread meanwhile (the Worker handing the
 * object an upload's body as it arrives), which is counted as the object's:
 * an upper bound of the object's share. bench:ingest and bench:push report it.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { BUSY_MARKER } from "../../client/serve/object-meter.ts";
import type { BenchServer } from "./server.ts";

export interface ObjectCpu {
  /** CPU ms of the runtime inside the object's busy spans. */
  readonly objectMs: number;
  /** CPU ms of the whole runtime over the step (Worker, object, local R2, the runtime's own). */
  readonly runtimeMs: number;
  /** Busy spans seen (one per quiet-to-busy turn of the object). */
  readonly spans: number;
}

/** Starts sampling; the returned function stops and answers the step's figures. */
export function meterObjectCpu(server: BenchServer): () => Promise<ObjectCpu> {
  const pid = server.runtimePids()[0];
  if (pid === undefined) throw new Error("no runtime workerd to meter");
  const logStart = statSync(server.logPath).size;
  const samples: [number, number][] = [];
  const take = () => samples.push([performance.timeOrigin + performance.now(), threadsCpuNs(pid)]);
  take();
  const timer = setInterval(take, 1);
  return async () => {
    // The last span's line is written as its call settles: give it a moment to reach the log.
    await new Promise((r) => setTimeout(r, 100));
    clearInterval(timer);
    take();
    const spans = busySpans(readFileSync(server.logPath, "utf8").slice(logStart));
    const at = (t: number) => cpuAt(samples, t);
    const objectNs = spans.reduce((sum, [s, e]) => sum + at(e + 1) - at(s), 0);
    const [first, last] = [samples[0] as [number, number], samples[samples.length - 1] as [number, number]];
    return { objectMs: objectNs / 1e6, runtimeMs: (last[1] - first[1]) / 1e6, spans: spans.length };
  };
}

/** The spans the meter logged, epoch ms (whole ms: the end is widened by one ms when summed). */
function busySpans(log: string): [number, number][] {
  const re = new RegExp(`^${BUSY_MARKER} (\\d+) (\\d+)$`, "gm");
  return [...log.matchAll(re)].map((m) => [Number(m[1]), Number(m[2])]);
}

/** CPU ns at time `t`, linear between the samples around it. */
function cpuAt(samples: readonly [number, number][], t: number): number {
  let lo = 0;
  let hi = samples.length - 1;
  if (t <= (samples[0] as [number, number])[0]) return (samples[0] as [number, number])[1];
  if (t >= (samples[hi] as [number, number])[0]) return (samples[hi] as [number, number])[1];
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if ((samples[mid] as [number, number])[0] <= t) lo = mid;
    else hi = mid;
  }
  const [t0, c0] = samples[lo] as [number, number];
  const [t1, c1] = samples[hi] as [number, number];
  return t1 === t0 ? c0 : c0 + ((c1 - c0) * (t - t0)) / (t1 - t0);
}

/** Run time of every thread of `pid` (schedstat's first field, ns). */
function threadsCpuNs(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return ns;
}
