/**
 * Whether a webhook subscriber's `delivery.url` (`events/subscribe`) may be POSTed to: the
 * code's half of SEP-3415's SSRF defence. *Webhook security*: "The server MUST validate
 * callback URLs", and "Callback URLs MUST use `https://`. Servers MUST reject
 * `events/subscribe` with a non-`https` `delivery.url` (`InvalidParams`)."
 *
 * A URL is read as the WHATWG URL parser reads it, which is how `fetch` reads it, and refused
 * ({@link CallbackUrlRefusal}, a closed set) when it is not https, carries credentials or a
 * fragment, is longer than {@link MAX_CALLBACK_URL_LENGTH}, or names a host that is never
 * public: an IP literal in IANA's special-purpose registries in any spelling the parser
 * canonicalizes (`0x7f.1`, `2130706433`, `[::ffff:10.0.0.1]`, `[64:ff9b::a9fe:a9fe]`, 6to4,
 * Teredo…), or `localhost`, `*.localhost` and the other local-only names. Those tables are
 * special-purpose-address.ts's, shared with the client ID metadata documents' fetch.
 *
 * What a pure check cannot see is where a DNS name resolves. "Servers SHOULD reject URLs whose
 * resolved IP is not globally routable … To prevent DNS rebinding, this validation MUST be
 * performed at delivery time": a Worker cannot resolve a name and pin the connection to the
 * address it checked, so that check is the runtime's, the `global_fetch_strictly_public`
 * compatibility flag, which refuses a fetch whose name resolves to a non-public address at
 * connection time (wrangler dev does not honour it; there, this module's refusals are the
 * whole guard). The delivery path calls {@link checkCallbackUrl} again before every attempt,
 * so a policy that changed since the subscribe (a removed WEBHOOK_DEV_ORIGINS) holds too.
 * "Webhook delivery requests MUST NOT follow HTTP redirects" is the fetch's
 * (`redirect: 'manual'`): a `Location` is never followed, so it is never classified here.
 *
 * The one exception, for development and tests only: WEBHOOK_DEV_ORIGINS lists loopback
 * origins ({@link parseDevOrigins}); a URL at exactly one of them passes, over plain http too,
 * while the Worker itself is served on loopback (`serverOrigin`). It departs from the text's
 * https MUST where nothing crosses a network; the text's "unless they are explicitly configured
 * to allow them" covers the loopback address. Such a receiver is still verified by the
 * handshake like any other. A deployed Worker (not on loopback) refuses a dev origin with its
 * own reason, `dev_origin_off_loopback`, so a variable left set says so instead of passing.
 */
import { isLoopbackHostname } from './allowlist.ts';
import { parseIpv4 } from './ip-address.ts';
import { hostRefusal } from './special-purpose-address.ts';

/**
 * Why a callback URL is refused:
 * - `malformed_url`: not an absolute URL;
 * - `too_long`: over {@link MAX_CALLBACK_URL_LENGTH} characters, as given or as parsed;
 * - `credentials_in_url`: `user:password@`. "HMAC is the only authentication mechanism this
 *   extension defines between the MCP server and the callback endpoint"; a password in the URL
 *   would be kept in the subscription key, the operator's view and the logs;
 * - `fragment`: `#…`, even empty: never sent in a request, so it only splits one endpoint into
 *   several subscription keys;
 * - `not_https`: any scheme but `https:` outside WEBHOOK_DEV_ORIGINS;
 * - `special_purpose_address`: an IPv4 or IPv6 literal outside the public unicast space;
 * - `local_name`: `localhost`, `*.localhost`, `*.local`, `*.home.arpa`, `*.internal`;
 * - `dev_origin_off_loopback`: a WEBHOOK_DEV_ORIGINS origin, asked of a Worker not on loopback.
 */
export const CALLBACK_URL_REFUSALS = [
  'malformed_url',
  'too_long',
  'credentials_in_url',
  'fragment',
  'not_https',
  'special_purpose_address',
  'local_name',
  'dev_origin_off_loopback',
] as const;

export type CallbackUrlRefusal = (typeof CALLBACK_URL_REFUSALS)[number];

/** Long enough for any real endpoint with a routing token; short enough to store in every subscription key. */
export const MAX_CALLBACK_URL_LENGTH = 2048;

/** What the decision depends on besides the URL. */
export interface CallbackUrlPolicy {
  /** WEBHOOK_DEV_ORIGINS as {@link parseDevOrigins} returns it: loopback origins, serialized as `URL.origin`. */
  readonly devOrigins: readonly string[];
  /** The origin the Worker itself was reached at (the request's URL): the dev origins count only where it is loopback. */
  readonly serverOrigin: string;
}

export type CallbackUrlCheck =
  | { readonly ok: true; readonly url: URL }
  /** `detail`: a sentence for the -32602 message (the client's own URL, judged without a network: no oracle). */
  | { readonly ok: false; readonly reason: CallbackUrlRefusal; readonly detail: string };

/**
 * May the server POST to `text`? On success, `url` is the parsed URL, whose `href` is the one
 * spelling to store and key by (case, default port and IPv4 forms canonicalized).
 */
export function checkCallbackUrl(text: string, policy: CallbackUrlPolicy): CallbackUrlCheck {
  if (text.length > MAX_CALLBACK_URL_LENGTH) return refused('too_long', `longer than ${MAX_CALLBACK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refused('malformed_url', 'not an absolute URL');
  }
  if (url.href.length > MAX_CALLBACK_URL_LENGTH)
    return refused('too_long', `longer than ${MAX_CALLBACK_URL_LENGTH} characters once parsed`);
  if (url.username !== '' || url.password !== '') {
    return refused('credentials_in_url', 'carries credentials (user:password@): deliveries are authenticated by their signature alone');
  }
  // `#` appears in an href only as the fragment's delimiter (elsewhere it is percent-encoded); `hash` is '' for a bare `#`.
  if (url.href.includes('#')) return refused('fragment', 'has a fragment (#…), which no request carries');
  if (policy.devOrigins.includes(url.origin)) {
    if (!isLoopbackHostname(hostnameOf(policy.serverOrigin))) {
      return refused(
        'dev_origin_off_loopback',
        `${url.origin} is a WEBHOOK_DEV_ORIGINS origin, for development only: served only by a Worker on loopback`,
      );
    }
    return { ok: true, url };
  }
  // "Callback URLs MUST use `https://`. Servers MUST reject `events/subscribe` with a non-`https` `delivery.url` (`InvalidParams`)."
  if (url.protocol !== 'https:') return refused('not_https', `${url.protocol} is not https: callback URLs must use https://`);
  // "Servers SHOULD reject URLs whose resolved IP is not globally routable per the IANA IPv4 and IPv6
  // Special-Purpose Address Registries": for a literal, the URL is its resolution.
  const refusal = hostRefusal(url.hostname);
  if (refusal !== undefined) {
    const literal = url.hostname.startsWith('[') || parseIpv4(url.hostname) !== undefined;
    return refused(literal ? 'special_purpose_address' : 'local_name', `${refusal}: not a public address`);
  }
  return { ok: true, url };
}

/**
 * WEBHOOK_DEV_ORIGINS: comma-separated origins (`http://127.0.0.1:8788`), each loopback
 * (`localhost`, 127.0.0.0/8, `[::1]`) and http or https, and nothing but an origin (no path,
 * query, fragment or credentials); unset or empty is none. Anything else is a configuration
 * error naming the variable: a typo must not quietly widen, or quietly drop, the exception.
 * Returns each origin as `URL.origin` writes it (`http://localhost:80` is `http://localhost`).
 */
export function parseDevOrigins(text: string | undefined): readonly string[] {
  if (text === undefined) return [];
  const origins: string[] = [];
  for (const entry of text.split(',').map((part) => part.trim())) {
    if (entry === '') continue;
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new DevOriginsError(entry, 'not a URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new DevOriginsError(entry, 'not http or https');
    if (url.href !== `${url.origin}/`) throw new DevOriginsError(entry, 'not an origin alone (a path, query, fragment or credentials)');
    if (!isLoopbackHostname(url.hostname)) throw new DevOriginsError(entry, 'not a loopback host (localhost, 127.0.0.0/8, [::1])');
    origins.push(url.origin);
  }
  return origins;
}

/** A WEBHOOK_DEV_ORIGINS entry refused: `configuration: …`, as every variable's error (misconfiguration.ts). */
export class DevOriginsError extends Error {
  override readonly name = 'DevOriginsError';
  constructor(
    readonly entry: string,
    why: string,
  ) {
    super(
      `configuration: WEBHOOK_DEV_ORIGINS lists loopback origins, comma-separated (http://127.0.0.1:PORT, http://localhost:PORT, http://[::1]:PORT), ` +
        `for webhook receivers on this machine during development; ${JSON.stringify(entry)} is ${why}. Leave it unset in production`,
    );
  }
}

const refused = (reason: CallbackUrlRefusal, detail: string): CallbackUrlCheck => ({ ok: false, reason, detail: `delivery.url ${detail}` });

/** The hostname of an origin or URL, or '' (never loopback) when it does not parse. */
function hostnameOf(origin: string): string {
  try {
    return new URL(origin).hostname;
  } catch {
    return '';
  }
}
