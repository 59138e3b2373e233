/**
 * A request's head as the front door's follower (inbound.ts) reads it: where
 * it ends and how long the body after it is, by RFC 9112 as workerd reads
 * it (a bare LF ends a line too). Where the two could read a head apart, it
 * is not followed.
 */

/** A line's end: LF, after an optional CR (workerd takes a bare LF as a line's end, as RFC 9112 §2.2 allows). */
export const LF = 0x0a;
export const CR = 0x0d;

/** What the follower does after a head: follows a body, awaits the upgrade's answer, stops, or cuts. */
export type AfterHead =
  | { readonly kind: "head"; readonly first: boolean }
  | { readonly kind: "body"; left: number }
  | { readonly kind: "chunk-size" }
  | { readonly kind: "answer" }
  | { readonly kind: "unfollowed" }
  | { readonly kind: "cut" };

/** What follows a request's head: its body, the runtime's answer to an upgrade, nothing followed, or a cut. */
export function afterHead(head: string, first: boolean): AfterHead {
  const fields = new Map<string, string[]>();
  for (const line of head.split(/\r?\n/).slice(1, -2)) {
    // A field line as RFC 9112 §5 writes it, or none followed: where the runtime would read a line otherwise
    // (a folded line, a space before the colon) is where it and the door could disagree on the body's length.
    const field = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*$/.exec(line);
    if (field === null) return { kind: "unfollowed" };
    const name = (field[1] as string).toLowerCase();
    fields.set(name, [...(fields.get(name) ?? []), field[2] as string]);
  }
  const lengths = (fields.get("content-length") ?? []).flatMap((v) => v.split(",").map((s) => s.trim()));
  const codings = fields.get("transfer-encoding");
  if (fields.has("upgrade")) {
    if (!first) return { kind: "cut" };
    return codings === undefined && lengths.every((l) => l === "0") ? { kind: "answer" } : { kind: "unfollowed" };
  }
  if (codings !== undefined) {
    return lengths.length === 0 && codings.join(",").trim().toLowerCase() === "chunked"
      ? { kind: "chunk-size" }
      : { kind: "unfollowed" };
  }
  if (lengths.length === 0) return { kind: "head", first: false };
  const length = lengths[0] as string;
  if (!/^\d{1,15}$/.test(length) || lengths.some((l) => l !== length)) return { kind: "unfollowed" };
  const left = Number(length);
  return left === 0 ? { kind: "head", first: false } : { kind: "body", left };
}

/** The size a chunked body's size line gives (0 for its last chunk), or null for a line that is none. */
export function chunkSize(line: string): number | null {
  const size = /^[0-9a-fA-F]{1,12}(?=;|[ \t]*$)/.exec(line)?.[0];
  return size === undefined ? null : Number.parseInt(size, 16);
}

/** Where a request head in `bytes` ends (just past its empty line, bare LFs or CRLFs), or -1. */
export function headEnd(bytes: Buffer): number {
  for (let at = bytes.indexOf(LF); at >= 0; at = bytes.indexOf(LF, at + 1)) {
    if (bytes[at + 1] === LF) return at + 2;
    if (bytes[at + 1] === CR && bytes[at + 2] === LF) return at + 3;
  }
  return -1;
}

const EMPTY = Buffer.alloc(0);

/** A head gathered as it comes, each byte looked at once: one sent a byte at a time costs no more than one sent whole. */
export class HeadReader {
  /** `size` bytes of `head`. */
  private head: Buffer = EMPTY;
  size = 0;

  /** `cut` ends its connection, when the door's unfinished heads pass their budget. */
  constructor(
    private readonly budget: HeadBudget,
    private readonly cut: () => void,
  ) {}

  /** Takes what of `bytes` belongs to the head: how many bytes that was, and whether the head is now whole. */
  read(bytes: Buffer): { used: number; whole: boolean } {
    const tail = this.head.subarray(Math.max(0, this.size - 2), this.size);
    const end = headEnd(tail.length === 0 ? bytes : Buffer.concat([tail, bytes]));
    const used = end >= 0 ? end - tail.length : bytes.length;
    if (this.size + used > this.head.length) {
      // Doubling up to 16 KiB, then 16 KiB at a time: a long head holds little more than itself.
      const needed = this.size + used;
      const grown = Buffer.allocUnsafe(Math.max(1024, needed + Math.min(needed, 16 * 1024)));
      this.head.copy(grown, 0, 0, this.size);
      this.head = grown;
    }
    bytes.copy(this.head, this.size, 0, used);
    this.size += used;
    // What it has allocated counts, not what it has used.
    this.budget.holds(this, end >= 0 ? 0 : this.head.length, this.cut);
    return { used, whole: end >= 0 };
  }

  /** The head gathered so far, no longer kept. */
  take(): Buffer {
    const head = this.head.subarray(0, this.size);
    this.close();
    return head;
  }

  /** Keeps nothing more: its connection ended, or its head is taken. */
  close(): void {
    this.head = EMPTY;
    this.size = 0;
    this.budget.holds(this, 0, this.cut);
  }
}

/**
 * The bytes of heads not yet whole, across every connection of one door:
 * each is kept until it ends (HeadReader), up to 128 KiB, and 1,500
 * connections that each sent 127 KiB of a head that never ended grew the
 * door by 207 MiB (the tester, 2026-12-07). Past HEADS_BYTES in all, the
 * connection with the largest is cut, then the next, until they fit: a
 * client's head is a few hundred bytes, and whole in its first read.
 */
export const HEADS_BYTES = 8 * 1024 * 1024;

export class HeadBudget {
  private total = 0;
  private readonly sizes = new Map<HeadReader, { size: number; cut: () => void }>();

  constructor(readonly capacity = HEADS_BYTES) {}

  /** `reader`'s unfinished head is now `size` bytes (0: none); past the budget, the largest are cut. */
  holds(reader: HeadReader, size: number, cut: () => void): void {
    this.total += size - (this.sizes.get(reader)?.size ?? 0);
    if (size === 0) this.sizes.delete(reader);
    else this.sizes.set(reader, { size, cut });
    while (this.total > this.capacity && this.sizes.size > 0) {
      const [largest, held] = [...this.sizes].reduce((a, b) => (b[1].size > a[1].size ? b : a));
      this.holds(largest, 0, held.cut);
      held.cut();
    }
  }
}
