/**
 * The sync's scan: the tree read against the store, what changed stamped
 * for push, and (when the push will need them) new chunks uploaded while
 * they are hashed (early-upload.ts).
 */
import type { ScanResult } from "../scan/scanner.ts";
import type { EngineContext } from "./context.ts";
import { EarlyUpload } from "./early-upload.ts";
import type { ProgressSink } from "./report.ts";
import { stampScan } from "./stamp.ts";

/** Files this large get a progress line of their own while they are hashed (the scan is synchronous within a file). */
const LARGE_FILE_BYTES = 32 * 1024 * 1024;

export interface ScanStampOptions {
  readonly progress: ProgressSink;
  /** Upload new chunks while scanning (a push follows and will not pull the whole state first). */
  readonly uploadEarly: boolean;
  /** Most chunk bytes held for uploading while scanning (EngineOptions.maxEarlyUploadBytes). */
  readonly maxEarlyUploadBytes?: number | undefined;
}

export async function scanAndStamp(ctx: EngineContext, opts: ScanStampOptions): Promise<void> {
  const { progress } = opts;
  let last = 0;
  const onProgress = (seen: number) => {
    progress.advance("scan", seen - last);
    last = seen;
  };
  // The paths the store knew are the likely total (exact for an unchanged tree).
  const onKnown = (paths: number) => progress.begin("scan", paths);
  const onFileBytes = largeFileProgress(progress);
  let result: ScanResult;
  if (opts.uploadEarly) {
    const upload = new EarlyUpload(ctx, opts.maxEarlyUploadBytes);
    try {
      result = await ctx.scanner.scanPausing(() => upload.pause(), {
        onProgress,
        onKnown,
        onFileBytes,
        onChunk: (hash, bytes) => upload.add(hash, bytes),
      });
    } finally {
      await upload.finish();
      // The bytes sent while scanning had no total; the push's own upload has one.
      progress.end("upload");
    }
  } else result = ctx.scanner.scan(null, { onProgress, onKnown, onFileBytes });
  progress.end("scan");
  ctx.report.stamped = stampScan(ctx.store, result);
  ctx.report.skipped.push(...result.skipped);
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
