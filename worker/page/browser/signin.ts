/** Sign-in: a workspace name (on `/`) and a token, kept in this tab's session storage only. */
import { ApiError } from "./api.ts";
import { fill, h } from "./dom.ts";

/** What a refusal means for a person holding the token. */
export function explain(e: unknown, workspace: string): string {
  if (!(e instanceof ApiError)) return `Something went wrong: ${String(e)}`;
  if (e.code === "unauthorized") {
    if (/expired/.test(e.message)) return "This token has expired. Get a fresh one and sign in again.";
    if (/signature/.test(e.message))
      return "This token was not signed by this server: it may be for another server or mistyped.";
    return `This is not a valid ferry token (${e.message}).`;
  }
  if (e.code === "forbidden") return `This token does not give access to workspace “${workspace}”.`;
  if (e.code === "invalid_workspace") return `“${workspace}” is not a workspace name.`;
  if (e.code === "network") return "The server did not answer. Is it running?";
  return `The server refused: ${e.code}: ${e.message}`;
}

export function renderSignIn(
  root: HTMLElement,
  workspace: string | null,
  problem: string | null,
  submit: (workspace: string, token: string) => void,
): void {
  const wsInput = h("input", {
    id: "workspace",
    name: "workspace",
    required: true,
    pattern: "[A-Za-z0-9][A-Za-z0-9._\\-]{0,127}",
    autocomplete: "off",
    spellcheck: "false",
    value: workspace ?? "",
  });
  const tokenInput = h("input", {
    id: "token",
    name: "token",
    type: "password",
    required: true,
    autocomplete: "off",
    spellcheck: "false",
    "aria-describedby": "token-help",
  });
  const form = h(
    "form",
    { class: "signin", "aria-labelledby": "signin-title" },
    h(
      "h1",
      { id: "signin-title" },
      workspace === null ? "Open a workspace" : h("span", {}, "Sign in to ", h("code", {}, workspace)),
    ),
    problem === null ? null : h("p", { class: "problem", role: "alert", id: "problem" }, problem),
    workspace === null ? h("label", { for: "workspace" }, "Workspace") : null,
    workspace === null ? wsInput : null,
    h("label", { for: "token" }, "Token"),
    tokenInput,
    h(
      "p",
      { id: "token-help", class: "muted small" },
      "A read-only token is enough: ",
      h("code", {}, "ferry open <dir>"),
      " prints a link with one, or ",
      h("code", {}, "ferry token <workspace> --read-only --ttl 1h"),
      ". It is kept in this tab only and sent to nobody but this server.",
    ),
    h("button", { type: "submit" }, "Open"),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    submit(workspace ?? wsInput.value.trim(), tokenInput.value.trim());
  });
  fill(root, h("main", { class: "narrow" }, form));
  (workspace === null ? wsInput : tokenInput).focus();
}
