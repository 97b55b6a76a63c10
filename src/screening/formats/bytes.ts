/** Whether the bytes hold nothing but whitespace (and a byte-order mark); stops at the first other byte. */
export function isBlank(bytes: Buffer): boolean {
  let start = 0;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) start = 3;
  for (let i = start; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x1a) return false;
  }
  return true;
}

/**
 * The bytes without a trailing DOS end-of-file mark (0x1A) and whitespace after it: OFAC's CSV
 * files end with one, which is not a row.
 */
export function withoutEofMark(bytes: Buffer): Buffer {
  let end = bytes.length;
  while (end > 0 && (bytes[end - 1] === 0x1a || bytes[end - 1] === 0x20 || bytes[end - 1] === 0x09)) end--;
  return end === bytes.length ? bytes : bytes.subarray(0, end);
}

/** Whether the last byte ends a line (what an untruncated official CSV file does). */
export function endsWithNewline(bytes: Buffer): boolean {
  return bytes.length > 0 && bytes[bytes.length - 1] === 0x0a;
}
