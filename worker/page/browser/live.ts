/**
 * Live updates: the workspace's sync socket carries a poke after every
 * commit (PROTOCOL.md §8.3). A browser cannot set an Authorization header on
 * a WebSocket, so the token travels as the subprotocol `bearer.<token>`
 * beside `ferry` (§8). The page sends nothing on it. While the socket is
 * down it reconnects with backoff and, meanwhile, polls at a modest interval.
 */
const POLL_MS = 15_000;
const CLOSE_TOKEN_EXPIRED = 4401;

export interface LiveEvents {
  changed(): void;
  state(state: "live" | "polling"): void;
  expired(): void;
}

export function goLive(url: string, token: string, on: LiveEvents): () => void {
  let socket: WebSocket | null = null;
  let poll: ReturnType<typeof setInterval> | null = null;
  let retry: ReturnType<typeof setTimeout> | null = null;
  let backoff = 1000;
  let stopped = false;

  const polling = (yes: boolean) => {
    if (yes && poll === null) poll = setInterval(() => on.changed(), POLL_MS);
    if (!yes && poll !== null) {
      clearInterval(poll);
      poll = null;
    }
    on.state(yes ? "polling" : "live");
  };

  const connect = () => {
    socket = new WebSocket(url, ["ferry", `bearer.${token}`]);
    socket.binaryType = "arraybuffer";
    socket.onopen = () => {
      backoff = 1000;
      polling(false);
      // Whatever happened while the socket was down.
      on.changed();
    };
    socket.onmessage = () => on.changed();
    socket.onclose = (e) => {
      socket = null;
      if (stopped) return;
      if (e.code === CLOSE_TOKEN_EXPIRED) {
        polling(false);
        on.expired();
        return;
      }
      polling(true);
      retry = setTimeout(connect, backoff + Math.random() * 500);
      backoff = Math.min(backoff * 2, 60_000);
    };
  };
  connect();
  return () => {
    stopped = true;
    socket?.close(1000);
    if (retry !== null) clearTimeout(retry);
    if (poll !== null) clearInterval(poll);
  };
}
