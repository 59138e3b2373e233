/**
 * A Cap'n Proto text literal for workerd's config (runtime-config.ts,
 * local-r2.ts): quotes, backslashes and every byte outside printable ASCII
 * escaped (`\xNN` per UTF-8 byte), so any value (a var from the command line,
 * a path) is read back exactly.
 */
export function capnpText(value: string): string {
  let out = '"';
  for (const byte of new TextEncoder().encode(value)) {
    if (byte === 0x22 || byte === 0x5c) out += `\\${String.fromCharCode(byte)}`;
    else if (byte >= 0x20 && byte < 0x7f) out += String.fromCharCode(byte);
    else out += `\\x${byte.toString(16).padStart(2, "0")}`;
  }
  return `${out}"`;
}
