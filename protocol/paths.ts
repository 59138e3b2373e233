import { ProtocolError } from "./errors.ts";
import { MAX_PATH_BYTES, MAX_SEGMENT_BYTES } from "./limits.ts";

const utf8 = new TextEncoder();

export const WORKSPACE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** A host's store directory, in its synced root (client/store/store-dir.ts). */
export const STORE_NAME = ".ferry";
/** `ferry serve`'s default data directory (client/serve/data-dir.ts), often started inside a synced project. */
export const SERVER_DATA_NAME = ".ferry-server";
/** The start of a host's temporary files (a file being pulled or restored, a replaced directory). */
export const TEMP_PREFIX = ".ferry-tmp-";

/**
 * Whether `name` is ferry's own on a host: its store, its temporary files,
 * a local server's data. A host's scan never syncs such a name and its pull
 * never writes one, so the server refuses an entry holding one as any
 * segment (reservedProblem): stored, every host would meet it on each pull.
 */
export function isReservedName(name: string): boolean {
  // One comparison for almost every name: the scanner asks it of each name it walks.
  if (!name.startsWith(STORE_NAME)) return false;
  return name === STORE_NAME || name === SERVER_DATA_NAME || name.startsWith(TEMP_PREFIX);
}

/**
 * Why an entry's path may not be stored or written although it is a valid
 * path (pathProblem), or null: a segment that is ferry's own on a host
 * (isReservedName). Asked of entries only, at the edges (push's decoder,
 * and the host's reader of changes and snapshot): a cursor, a read route
 * or a host's stored deferral may still name such a path, which a server
 * that stored it before this rule still holds.
 */
export function reservedProblem(path: string): string | null {
  if (!path.includes(STORE_NAME)) return null;
  for (const segment of path.split("/")) {
    if (isReservedName(segment)) return `'${segment}' is reserved for ferry's own files on a host`;
  }
  return null;
}

/**
 * Why a path is refused, or null when it is a valid workspace path:
 * `/`-separated, NFC, no empty, `.` or `..` segment, no NUL, no leading `/`,
 * at most 4096 bytes and 255 bytes a segment.
 *
 * U+FFFD and lone surrogates are refused too: they are what a CBOR decoder
 * yields for bytes that are not valid UTF-8, so accepting them would store a
 * different name than the host sent.
 */
export function pathProblem(path: string): string | null {
  if (path.length === 0) return "path is empty";
  // ASCII text (most paths; the scanner asks for every name it walks) is faithful, in NFC, a byte a character.
  const ascii = isAscii(path);
  if (!ascii && !isFaithfulText(path)) return "path is not valid UTF-8";
  if (path.includes("\0")) return "path contains NUL";
  if (path.startsWith("/")) return "path is absolute";
  if (!ascii && path.normalize("NFC") !== path) return "path is not in NFC";
  if ((ascii ? path.length : utf8.encode(path).length) > MAX_PATH_BYTES) {
    return `path is longer than ${MAX_PATH_BYTES} bytes`;
  }
  for (const segment of path.split("/")) {
    if (segment === "") return "path has an empty segment";
    if (segment === "." || segment === "..") return `path has a '${segment}' segment`;
    if (segment.length > MAX_SEGMENT_BYTES / 3 && utf8.encode(segment).length > MAX_SEGMENT_BYTES) {
      return `path segment is longer than ${MAX_SEGMENT_BYTES} bytes`;
    }
  }
  return null;
}

/**
 * pathProblem of `path`, a directory listing's `name` joined under a parent
 * path that passed pathProblem: the scanner asks it for every name it walks.
 * A short ASCII name under a path short enough that its UTF-8 cannot pass
 * the limit needs only its own characters checked; anything else is asked
 * of pathProblem, which then names the problem.
 */
export function walkedPathProblem(path: string, name: string): string | null {
  if (path.length <= MAX_PATH_BYTES / 3 && name.length <= MAX_SEGMENT_BYTES && isPlainSegment(name)) return null;
  return pathProblem(path);
}

/** ASCII without `/` or NUL, and neither empty, `.` nor `..`: a valid segment whatever its place. */
function isPlainSegment(name: string): boolean {
  if (name === "" || name === "." || name === "..") return false;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c > 0x7f || c === 0x2f || c === 0) return false;
  }
  return true;
}

/**
 * False for text holding U+FFFD or a lone surrogate. The CBOR decoder turns
 * bytes that are not UTF-8 into U+FFFD (`61 ff 62` reads as "a\uFFFDb"), so
 * text that holds one may not be what the sender sent: paths and symlink
 * targets refuse it rather than store another name.
 */
export function isFaithfulText(text: string): boolean {
  return text.isWellFormed() && !text.includes("\uFFFD");
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** Throws `invalid_path` when an entry's path is reserved (reservedProblem): push's rule. */
export function assertUnreservedPath(path: string): void {
  const problem = reservedProblem(path);
  if (problem !== null) throw new ProtocolError("invalid_path", problem, { path });
}

/** Throws `invalid_path` naming the path and the reason. */
export function assertValidPath(path: string): void {
  const problem = pathProblem(path);
  if (problem !== null) throw new ProtocolError("invalid_path", problem, { path });
}

export function isValidWorkspaceName(name: string): boolean {
  return WORKSPACE_NAME.test(name);
}

/**
 * The half-open range [`${path}/`, `${path}0`) holds exactly the paths under
 * `path`, since '0' is the byte after '/'. Used for subtree queries on an
 * index ordered by bytes.
 */
export function subtreeRange(path: string): { readonly from: string; readonly to: string } {
  return { from: `${path}/`, to: `${path}0` };
}
