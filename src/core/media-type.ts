/**
 * Media types and Accept lists parsed per RFC 9110 §8.3.1 and §12.5.1 — never matched by
 * substring, so `application/jsonx` or `text/event-stream;q=0` are not mistaken for support.
 */
export interface MediaRange {
  readonly type: string;
  readonly subtype: string;
  readonly params: ReadonlyMap<string, string>;
  /** The quality weight; 0 means "not acceptable". */
  readonly q: number;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Splits on commas or semicolons that are not inside a quoted string. */
function splitOutsideQuotes(text: string, separator: ',' | ';'): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (quoted && ch === '\\' && i + 1 < text.length) {
      current += ch + text[++i];
      continue;
    }
    if (ch === '"') quoted = !quoted;
    if (ch === separator && !quoted) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

function unquote(value: string): string {
  return value.startsWith('"') && value.endsWith('"') && value.length >= 2 ? value.slice(1, -1).replace(/\\(.)/g, '$1') : value;
}

/** Parses one media type (or range); undefined if it is not well formed. */
export function parseMediaType(text: string): MediaRange | undefined {
  const [essence, ...rawParams] = splitOutsideQuotes(text, ';');
  const slash = (essence ?? '').trim().split('/');
  if (slash.length !== 2) return undefined;
  const [type, subtype] = slash.map((part) => part.trim().toLowerCase()) as [string, string];
  if (!TOKEN.test(type) || !TOKEN.test(subtype)) return undefined;
  const params = new Map<string, string>();
  let q = 1;
  for (const raw of rawParams) {
    if (raw.trim() === '') continue;
    const eq = raw.indexOf('=');
    if (eq <= 0) return undefined;
    const name = raw.slice(0, eq).trim().toLowerCase();
    const value = unquote(raw.slice(eq + 1).trim());
    if (!TOKEN.test(name)) return undefined;
    if (name === 'q') {
      const weight = Number(value);
      if (!/^[01](\.[0-9]{0,3})?$/.test(value) || weight > 1) return undefined;
      q = weight;
    } else {
      params.set(name, value);
    }
  }
  return { type, subtype, params, q };
}

/** Parses an Accept header into its well-formed ranges; malformed members are ignored. */
export function parseAccept(header: string | null): MediaRange[] {
  if (header === null) return [];
  return splitOutsideQuotes(header, ',')
    .filter((member) => member.trim() !== '')
    .map(parseMediaType)
    .filter((range): range is MediaRange => range !== undefined);
}

/**
 * Whether the Accept list explicitly lists `essence` (e.g. `text/event-stream`) with a
 * non-zero weight. The transport spec requires clients to *list* the types, so wildcards
 * do not count.
 */
export function acceptListsType(ranges: readonly MediaRange[], essence: string): boolean {
  const [type, subtype] = essence.split('/');
  return ranges.some((range) => range.type === type && range.subtype === subtype && range.q > 0);
}

/** Whether a Content-Type header names JSON (`application/json`, any charset parameter). */
export function isJsonContentType(header: string | null): boolean {
  if (header === null) return false;
  const media = parseMediaType(header);
  if (media === undefined || media.type !== 'application' || media.subtype !== 'json') return false;
  const charset = media.params.get('charset');
  return charset === undefined || charset.toLowerCase() === 'utf-8';
}

/** Whether a `Content-Type` header names an SSE stream (`text/event-stream`, any parameters). */
export function isEventStreamType(header: string | null): boolean {
  const type = parseMediaType(header ?? '');
  return type?.type === 'text' && type.subtype === 'event-stream';
}
