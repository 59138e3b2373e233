/**
 * When a host had requests in flight: each request's start and end, read
 * as the mean and peak number in flight while any was (the pipeline's
 * concurrency) and the time none was (the host working alone, or waiting on
 * nothing). bench/host.ts records it around its transport; the push and
 * pull tables print it next to their times.
 */
export interface RequestConcurrency {
  readonly requests: number;
  /** Mean requests in flight over the time at least one was. */
  readonly meanInFlight: number;
  readonly maxInFlight: number;
  /** Time within the measured span with no request in flight. */
  readonly idleMs: number;
  readonly spanMs: number;
}

export class RequestTimeline {
  private readonly spans: [number, number][] = [];

  /** Marks a request's start; call the returned function at its end. */
  begin(): () => void {
    const span: [number, number] = [performance.now(), Number.NaN];
    this.spans.push(span);
    return () => {
      span[1] = performance.now();
    };
  }

  /** Concurrency over the span [from, to] (performance.now() times). */
  summary(from: number, to: number): RequestConcurrency {
    const events: [number, number][] = [];
    let total = 0;
    for (const [start, end] of this.spans) {
      const stop = Number.isNaN(end) ? to : end;
      events.push([start, 1], [stop, -1]);
      total += stop - start;
    }
    // Ends before starts at the same instant: back-to-back requests do not count as overlapping.
    events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let inFlight = 0;
    let max = 0;
    let busy = 0;
    let busySince = 0;
    for (const [at, delta] of events) {
      if (inFlight === 0 && delta > 0) busySince = at;
      inFlight += delta;
      max = Math.max(max, inFlight);
      if (inFlight === 0) busy += at - busySince;
    }
    return {
      requests: this.spans.length,
      meanInFlight: busy > 0 ? total / busy : 0,
      maxInFlight: max,
      idleMs: Math.max(0, to - from - busy),
      spanMs: to - from,
    };
  }
}
