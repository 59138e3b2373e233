/**
 * Where the page keeps its token: the tab's session storage, per workspace.
 * A token that came in the URL fragment (`ferry open` prints such links) is
 * moved there and removed from the address bar and history at once, so it
 * never reaches a server log, a bookmark or a Referer.
 */
const KEY = "ferry.token.";

export function takeTokenFromFragment(workspace: string | null): void {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const token = fragment.get("token");
  if (token === null) return;
  if (workspace !== null && token !== "") saveToken(workspace, token);
  history.replaceState(history.state, "", location.pathname + location.search);
}

export function savedToken(workspace: string): string | null {
  return sessionStorage.getItem(KEY + workspace);
}

export function saveToken(workspace: string, token: string): void {
  sessionStorage.setItem(KEY + workspace, token.trim());
}

export function forgetToken(workspace: string): void {
  sessionStorage.removeItem(KEY + workspace);
}
