/** Pacing the page's refreshes after pokes, which may come several a second from a busy workspace. */

/** Runs `fn` at most once at a time; calls while it runs fold into one more run after it. */
export function coalesced(fn: () => Promise<void>): () => void {
  let running = false;
  let again = false;
  const run = async (): Promise<void> => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      await fn();
    } finally {
      running = false;
    }
    if (again) {
      again = false;
      await run();
    }
  };
  return () => void run();
}

/** Runs `fn` at most once per `ms`: a call sooner is deferred to the end of the interval (the last one wins). */
export function throttled(fn: () => void, ms: number): () => void {
  let last = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  return () => {
    if (timer !== null) return;
    const wait = last + ms - Date.now();
    if (wait <= 0) {
      last = Date.now();
      fn();
      return;
    }
    timer = setTimeout(() => {
      timer = null;
      last = Date.now();
      fn();
    }, wait);
  };
}
