/**
 * UTF-8 sizes of strings, as SQLite stores them: bounds on what a Durable Object can keep
 * are in UTF-8 bytes, while JavaScript strings count UTF-16 units.
 */

const NON_ASCII = /[^\0-\x7f]/;

/** The UTF-8 size of a string, as SQLite counts `octet_length(text)`. */
export function utf8Length(text: string): number {
  let bytes = text.length;
  if (!NON_ASCII.test(text)) return bytes; // the common case, scanned natively
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) {
      bytes += 1;
    } else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 2; // a surrogate pair: 2 UTF-16 units, 4 UTF-8 bytes; alone: U+FFFD, 3 bytes
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    } else {
      bytes += 2;
    }
  }
  return bytes;
}

/**
 * `text` cut into pieces of at most `maxUnits` UTF-16 units (at least 2), in order, never
 * between the two halves of a surrogate pair: SQLite stores text as UTF-8, where a lone half
 * would become U+FFFD. A UTF-16 unit takes at most 3 UTF-8 bytes, so a piece takes at most
 * 3 × `maxUnits`.
 */
export function splitText(text: string, maxUnits: number): string[] {
  if (!Number.isInteger(maxUnits) || maxUnits < 2) throw new RangeError(`maxUnits must be an integer of at least 2, got ${maxUnits}`);
  const pieces: string[] = [];
  let start = 0;
  while (text.length - start > maxUnits) {
    let end = start + maxUnits;
    const last = text.charCodeAt(end - 1);
    if (last >= 0xd800 && last <= 0xdbff) end -= 1; // a high surrogate: its pair goes to the next piece
    pieces.push(text.slice(start, end));
    start = end;
  }
  pieces.push(text.slice(start));
  return pieces;
}
