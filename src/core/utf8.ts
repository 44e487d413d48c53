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
      bytes += 2; // a surrogate pair: 2 UTF-16 units, 4 UTF-8 bytes
      i++;
    } else {
      bytes += 2;
    }
  }
  return bytes;
}
