/**
 * Runs a generator of steps to its end without pausing and returns its
 * value: the synchronous form of work written as steps so that a caller may
 * give way between them (Scanner.scanPausing, chunkFileSteps).
 */
export function runSteps<T>(steps: Generator<unknown, T, void>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}
