/**
 * The sync's scan: the tree read against the store, what changed stamped
 * for push, and (when the push will need them) new chunks uploaded while
 * they are hashed (early-upload.ts). It runs while hello is out, so a
 * rescan that reads nothing (most paths unchanged) costs no round trip.
 */
import type { HelloResponse } from "../../protocol/hello.ts";
import { trace } from "../common/trace.ts";
import type { ScanPause } from "../scan/scanner.ts";
import type { EngineContext } from "./context.ts";
import { EarlyUpload } from "./early-upload.ts";
import type { ProgressSink } from "./report.ts";
import { stampScan } from "./stamp.ts";
import { whileAnswering } from "./while-answering.ts";

/** Files this large get a progress line of their own while they are hashed. */
const LARGE_FILE_BYTES = 32 * 1024 * 1024;

export interface ScanStampOptions {
  readonly progress: ProgressSink;
  /** Upload new chunks while scanning: asked once hello answered (a push follows and will not pull the whole state first). */
  readonly uploadEarly: (hello: HelloResponse) => boolean;
  /** Most chunk bytes held for uploading while scanning (EngineOptions.maxEarlyUploadBytes). */
  readonly maxEarlyUploadBytes?: number | undefined;
  /** Paths left unstamped (SyncOptions.unsettled). */
  readonly unsettled?: ((path: string) => boolean) | undefined;
  /** Ends the scan at its next path or block once aborted (SyncOptions.signal: Ctrl-C). */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Scans while `helloing` is answered and stamps the scan once it is (the
 * scan only reads the store, so what hello records or refuses comes first,
 * as when hello was awaited before the scan). The walk gives the event loop
 * a turn every few milliseconds until hello has answered, and ends early if
 * it failed; the first file it must read waits for hello, whose answer
 * decides whether new chunks go to the early upload. Returns the answer.
 */
export async function scanAndStamp(
  ctx: EngineContext,
  helloing: Promise<HelloResponse>,
  opts: ScanStampOptions,
): Promise<HelloResponse> {
  const { progress } = opts;
  let last = 0;
  const onProgress = (seen: number) => {
    progress.advance("scan", seen - last);
    last = seen;
  };
  // The paths the store knew are the likely total (exact for an unchanged tree).
  const onKnown = (paths: number) => progress.begin("scan", paths);
  const onFileBytes = largeFileProgress(progress);
  const waiting = whileAnswering(helloing);
  // Made (or not) once hello has answered.
  const early: { decided: boolean; upload?: EarlyUpload } = { decided: false };
  const decide = (hello: HelloResponse) => {
    early.decided = true;
    if (opts.uploadEarly(hello)) early.upload = new EarlyUpload(ctx, opts.maxEarlyUploadBytes);
  };
  const pause: ScanPause = (beforeRead) => {
    opts.signal?.throwIfAborted();
    if (early.decided) return early.upload?.pause() ?? null;
    const hello = waiting.answer();
    if (hello !== null) {
      decide(hello);
      return null;
    }
    // The first file read waits for hello, so that its chunks may go early too.
    return beforeRead ? helloing.then(decide) : waiting.turn();
  };
  let landing: Promise<void> | null = null;
  try {
    const result = await ctx.scanner.scanPausing(pause, {
      onProgress,
      onKnown,
      onFileBytes,
      onChunk: (hash, bytes) => early.upload?.add(hash, bytes),
    });
    // The last batches go now and are answered while the scan is stamped and
    // the push's first pack is cut: the object took them while the host
    // waited, then the host stamped and cut while it idled (BENCHMARKS §15,
    // §16). The push awaits `uploadsLanding` before it decides what to send.
    trace(() => `scan: ${result.seen} seen, ${result.hashedFiles} files read`);
    await early.upload?.flush();
    const hello = await helloing;
    progress.end("scan");
    ctx.report.stamped = stampScan(ctx.store, result, opts.unsettled);
    ctx.report.skipped.push(...result.skipped);
    if (early.upload) {
      landing = landed(early.upload, progress);
      ctx.uploadsLanding = landing;
    }
    return hello;
  } finally {
    // A failed scan or hello: the batches in flight are answered before the error goes up.
    if (early.upload && landing === null) await landed(early.upload, progress);
  }
}

/** Every batch answered; the bytes sent while scanning had no total, the push's own upload has one. */
async function landed(upload: EarlyUpload, progress: ProgressSink): Promise<void> {
  await upload.finish();
  progress.end("upload");
}

/** A `hash` task (bytes, with the file's size as total) for each file of LARGE_FILE_BYTES or more while it is read. */
function largeFileProgress(progress: ProgressSink): (path: string, done: number, size: number) => void {
  let current: string | null = null;
  let last = 0;
  return (path, done, size) => {
    if (size < LARGE_FILE_BYTES) return;
    if (path !== current) {
      progress.begin("hash", size);
      current = path;
      last = 0;
    }
    progress.advance("hash", done - last);
    last = done;
    if (done >= size) {
      progress.end("hash");
      current = null;
    }
  };
}
