/**
 * What joining an objects/get answer costs the host, in isolation (BENCHMARKS.md
 * section 11): 8 MiB answers arriving as fresh 64 KiB buffers (a socket's
 * reads), their objects (64 KiB–512 KiB) hashed and written to /dev/null,
 * the buffers joined first (`Buffer.concat`, as before fed6931), copied into
 * one buffer of the declared length, or kept as parts (`writev`). CPU ms per
 * MiB, arrival included, three alternated rounds.
 *
 *   npx tsx bench/micro/answer-join.ts [MiB per round, default 256]
 */
import { createHash } from "node:crypto";
import { openSync, writeSync, writevSync } from "node:fs";

const MiB = 1 << 20;
const PIECE = 64 * 1024;
const ANSWER = 8 * MiB;
const TOTAL = Number(process.argv[2] ?? 256) * MiB;
const fd = openSync("/dev/null", "w");

function arrive(): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < ANSWER; at += PIECE) out.push(Buffer.allocUnsafeSlow(PIECE).fill(at & 0xff));
  return out;
}

const objects: [number, number][] = [];
for (let at = 0, r = 1; at < ANSWER; ) {
  r = (r * 1103515245 + 12345) & 0x7fffffff;
  const n = Math.min(ANSWER - at, 65536 + (r % (448 * 1024)));
  objects.push([at, n]);
  at += n;
}

const hash = (...parts: Uint8Array[]) => {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return h.digest();
};

function viewsOf(pieces: Buffer[], at: number, n: number): Buffer[] {
  const views: Buffer[] = [];
  let i = Math.floor(at / PIECE);
  let off = at % PIECE;
  for (let got = 0; got < n; off = 0) {
    const p = pieces[i++] as Buffer;
    const take = Math.min(p.length - off, n - got);
    views.push(p.subarray(off, off + take));
    got += take;
  }
  return views;
}

function fromWhole(all: Buffer): void {
  for (const [a, n] of objects) {
    const v = all.subarray(a, a + n);
    hash(v);
    writeSync(fd, v);
  }
}

const strategies: Record<string, (pieces: Buffer[]) => void> = {
  concat: (pieces) => fromWhole(Buffer.concat(pieces)),
  presized: (pieces) => {
    const all = Buffer.allocUnsafeSlow(ANSWER);
    let at = 0;
    for (const p of pieces) {
      all.set(p, at);
      at += p.length;
    }
    fromWhole(all);
  },
  parts: (pieces) => {
    for (const [a, n] of objects) {
      const views = viewsOf(pieces, a, n);
      hash(...views);
      writevSync(fd, views);
    }
  },
};

const results: Record<string, string[]> = Object.fromEntries(Object.keys(strategies).map((name) => [name, []]));
for (let round = 0; round < 3; round++) {
  for (const [name, run] of Object.entries(strategies)) {
    const before = process.cpuUsage();
    for (let done = 0; done < TOTAL; done += ANSWER) run(arrive());
    const used = process.cpuUsage(before);
    results[name]?.push(((used.user + used.system) / 1000 / (TOTAL / MiB)).toFixed(2));
  }
}
console.log("CPU ms per MiB (arrival included), three rounds:", results);
