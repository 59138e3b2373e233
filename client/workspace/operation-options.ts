/** The options of one operation of an open workspace (workspace.ts): push, pull, sync, status. */

export interface OperationOptions {
  readonly signal?: AbortSignal;
}

export interface PushOptions extends OperationOptions {
  /** Push a deletion of most of the tree (WorkspaceOptions.massDelete) in this one operation. */
  readonly allowMassDelete?: boolean;
  /** After the push, upload again what the server lost of this folder's synced files (PROTOCOL.md §7.11). */
  readonly heal?: boolean;
}

export interface PullOptions extends OperationOptions {
  /** Pull a workspace nothing was ever pushed to (otherwise refused as a likely typo). */
  readonly create?: boolean;
}

export interface StatusOptions extends OperationOptions {
  /**
   * Refuse, as `pull` does without `create`, a workspace nothing was ever
   * pushed to (NoSuchWorkspaceError): what `ferry pull --dry-run` says.
   */
  readonly mustExist?: boolean;
}
