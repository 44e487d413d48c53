/**
 * Bounds on what a client may register (RFC 7591 dynamic registration is open to anyone): each
 * field the provider stores, for the registration's lifetime (90 days, renewed while the client
 * is used), and shows on the consent page. RFC 7591 sets no sizes; these are generous for any
 * real client (a name is a line, a URL fits the 2,048 bytes browsers and proxies carry) and
 * small enough that a record stays small whatever is sent. A registration past one is refused,
 * `invalid_client_metadata` (§3.2.2), before anything is stored.
 *
 * A bound holds on what is stored, not on what was sent (issue 42, finding 1): the provider
 * keeps the record as JSON in KV, where a control character of a name is six bytes (`\u0001`),
 * so a name of 256 of them took 1,538 bytes. So each string is bounded in bytes as stored — the
 * UTF-8 of its JSON string, quotes excluded ({@link storedBytes}) — and, where a person reads
 * it, in characters too; and the whole record is bounded ({@link RECORD_BYTES}), since the
 * fields' bounds added up are far more.
 */
import { utf8Length } from '../core/utf8.ts';

interface StringBound {
  /** UTF-16 units: what a page shows. */
  readonly characters: number;
  /** UTF-8 bytes of the JSON string, quotes excluded: what KV keeps. */
  readonly bytes: number;
}

const NAME: StringBound = { characters: 256, bytes: 1_024 };
const URI: StringBound = { characters: 2_048, bytes: 2_048 };

/** Each stored string field (and its language-tagged variants). */
export const FIELD_BOUNDS: Readonly<Record<string, StringBound>> = {
  client_name: NAME,
  client_uri: URI,
  logo_uri: URI,
  policy_uri: URI,
  tos_uri: URI,
  jwks_uri: URI,
};

/** The most entries of each stored list, and each entry's bound. */
export const LIST_BOUNDS: Readonly<Record<string, StringBound & { readonly entries: number }>> = {
  redirect_uris: { entries: 10, ...URI },
  contacts: { entries: 10, ...NAME },
  // Each must be one the server supports (the provider checks): more than a few are repeats.
  grant_types: { entries: 10, characters: 256, bytes: 256 },
  response_types: { entries: 10, characters: 256, bytes: 256 },
};

/** Language-tagged variants (`client_name#fr`, RFC 7591 §2.2) stored in all; a tag's longest form (RFC 5646 §4.4.1), in characters and in bytes as stored. */
export const LOCALIZED_FIELDS = 10;
export const LANGUAGE_TAG_CHARACTERS = 35;

/** The most a registered client's record takes in KV: the UTF-8 of its JSON, everything in it. */
export const RECORD_BYTES = 16 * 1024;

/**
 * What the provider adds to the fields a client sent: its client id (16 characters), two dates,
 * a secret's SHA-256 (64 hex digits), its flags, and the defaults of grant and response types
 * and the authentication method — about 300 bytes under its own (camel-case, so shorter) names.
 */
const PROVIDER_FIELDS_BYTES = 512;

/** The fields the provider stores of what was sent (parseOAuthClientMetadata), under their RFC 7591 names. */
const STORED_FIELDS = [
  'client_name',
  'client_uri',
  'logo_uri',
  'policy_uri',
  'tos_uri',
  'jwks_uri',
  'contacts',
  'redirect_uris',
  'grant_types',
  'response_types',
  'token_endpoint_auth_method',
];

/** The language-tagged fields the provider stores (its I18N_FIELDS): `<field>#<tag>`, the tag not empty. */
const LOCALIZED_STORED = new Set(['client_name', 'client_uri', 'logo_uri', 'tos_uri', 'policy_uri']);

/** The bytes `text` takes in a JSON document, quotes excluded: a control character is six (`\u0001`), a lone surrogate six. */
export const storedBytes = (text: string) => utf8Length(JSON.stringify(text)) - 2;

/** The first bound `metadata` passes, described for the client; `undefined` within every bound. */
export function clientMetadataViolation(metadata: Readonly<Record<string, unknown>>): string | undefined {
  let localized = 0;
  for (const [key, value] of Object.entries(metadata)) {
    const hash = key.indexOf('#');
    const field = hash === -1 ? key : key.slice(0, hash);
    if (hash !== -1 && FIELD_BOUNDS[field] !== undefined) {
      if (++localized > LOCALIZED_FIELDS) return `at most ${LOCALIZED_FIELDS} language-tagged fields`;
      const tag = key.slice(hash + 1);
      if (tag.length > LANGUAGE_TAG_CHARACTERS || storedBytes(tag) > LANGUAGE_TAG_CHARACTERS)
        return `${field}: a language tag of at most ${LANGUAGE_TAG_CHARACTERS} characters, as many bytes stored`;
    }
    const bound = FIELD_BOUNDS[field];
    if (bound !== undefined && typeof value === 'string') {
      if (value.length > bound.characters) return `${key} is longer than ${bound.characters} characters`;
      if (storedBytes(value) > bound.bytes) return `${key} takes more than ${bound.bytes} bytes stored`;
    }
    const list = LIST_BOUNDS[key];
    if (list !== undefined && Array.isArray(value)) {
      if (value.length > list.entries) return `${key}: at most ${list.entries} entries`;
      const entries = value.filter((entry): entry is string => typeof entry === 'string');
      if (entries.some((entry) => entry.length > list.characters)) return `${key}: each entry at most ${list.characters} characters`;
      if (entries.some((entry) => storedBytes(entry) > list.bytes)) return `${key}: each entry at most ${list.bytes} bytes stored`;
    }
  }
  const bytes = recordBytes(metadata) + PROVIDER_FIELDS_BYTES;
  if (bytes > RECORD_BYTES) return `the registration would take ${bytes} bytes stored, more than ${RECORD_BYTES}`;
  return undefined;
}

/**
 * The bytes of the fields the provider would store of `metadata`, as JSON: its own record holds
 * the same values under names no longer than these, and the language-tagged ones under these.
 */
function recordBytes(metadata: Readonly<Record<string, unknown>>): number {
  const stored: Record<string, unknown> = {};
  for (const field of STORED_FIELDS) if (metadata[field] !== undefined) stored[field] = metadata[field];
  const i18n = Object.entries(metadata).filter(([key]) => {
    const hash = key.indexOf('#');
    return hash > 0 && hash < key.length - 1 && LOCALIZED_STORED.has(key.slice(0, hash));
  });
  if (i18n.length > 0) stored.i18n = Object.fromEntries(i18n);
  return utf8Length(JSON.stringify(stored));
}
