/**
 * Bounds on what a client may register (RFC 7591 dynamic registration is open to anyone): each
 * field the provider stores, for the registration's lifetime (90 days, renewed while the client
 * is used), and shows on the consent page. RFC 7591 sets no sizes; these are generous for any
 * real client (a name is a line, a URL fits the 2,048 characters browsers and proxies carry) and
 * small enough that a record stays a few kilobytes whatever is sent. A registration past one is
 * refused, `invalid_client_metadata` (§3.2.2), before anything is stored.
 */

/** The longest value of each stored string field, in characters. */
export const FIELD_CHARACTERS: Readonly<Record<string, number>> = {
  client_name: 256,
  client_uri: 2_048,
  logo_uri: 2_048,
  policy_uri: 2_048,
  tos_uri: 2_048,
  jwks_uri: 2_048,
};

/** The most entries of each stored list, and the longest entry, in characters. */
export const LIST_BOUNDS: Readonly<Record<string, { readonly entries: number; readonly characters: number }>> = {
  redirect_uris: { entries: 10, characters: 2_048 },
  contacts: { entries: 10, characters: 256 },
};

/** Language-tagged variants (`client_name#fr`, RFC 7591 §2.2) stored in all; a tag's longest form (RFC 5646 §4.4.1). */
export const LOCALIZED_FIELDS = 10;
export const LANGUAGE_TAG_CHARACTERS = 35;

/** The first bound `metadata` passes, described for the client; `undefined` within every bound. */
export function clientMetadataViolation(metadata: Readonly<Record<string, unknown>>): string | undefined {
  let localized = 0;
  for (const [key, value] of Object.entries(metadata)) {
    const hash = key.indexOf('#');
    const field = hash === -1 ? key : key.slice(0, hash);
    if (hash !== -1 && FIELD_CHARACTERS[field] !== undefined) {
      if (++localized > LOCALIZED_FIELDS) return `at most ${LOCALIZED_FIELDS} language-tagged fields`;
      if (key.length - hash - 1 > LANGUAGE_TAG_CHARACTERS)
        return `${field}: a language tag of at most ${LANGUAGE_TAG_CHARACTERS} characters`;
    }
    const characters = FIELD_CHARACTERS[field];
    if (characters !== undefined && typeof value === 'string' && value.length > characters) {
      return `${key} is longer than ${characters} characters`;
    }
    const list = LIST_BOUNDS[key];
    if (list !== undefined && Array.isArray(value)) {
      if (value.length > list.entries) return `${key}: at most ${list.entries} entries`;
      if (value.some((entry) => typeof entry === 'string' && entry.length > list.characters)) {
        return `${key}: each entry at most ${list.characters} characters`;
      }
    }
  }
  return undefined;
}
