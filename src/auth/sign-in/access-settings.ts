/**
 * Cloudflare Access as an identity source (AUTH=oauth): its two settings, read and checked
 * before any request is served. Pure: no fetch, no key, no clock.
 *
 * - ACCESS_TEAM_DOMAIN: the Zero Trust team domain, `https://<team>.cloudflareaccess.com`. It is
 *   both where the team's signing keys are (`/cdn-cgi/access/certs`) and the `iss` every
 *   assertion carries, so it is kept as that exact origin. The bare `<team>.cloudflareaccess.com`
 *   (as the dashboard shows it) is accepted and given its `https://`; `http://`, a port, a path,
 *   a query or credentials are refused, since none of them can be an issuer Access signs as. The
 *   host must be one label under `cloudflareaccess.com`: a typo'd or look-alike host would make
 *   the Worker fetch keys from, and believe, whoever owns it. Tests (and only code, never a
 *   variable) may allow another host with `anyTeamHost`.
 * - ACCESS_AUD: the Access application's Application Audience (AUD) tag, 64 hex characters. An
 *   assertion's `aud` must contain it: the team signs assertions for each of its applications
 *   with the same keys, so the tag is what says an assertion was made for this one.
 */

export interface AccessSettings {
  /** `https://<team>.cloudflareaccess.com`: the issuer (`iss`) and where the keys are. */
  readonly teamDomain: string;
  /** The application's AUD tag, lower-case hex. */
  readonly audience: string;
}

export interface AccessVars {
  readonly ACCESS_TEAM_DOMAIN?: string;
  readonly ACCESS_AUD?: string;
}

export interface AccessSettingsOptions {
  /** Accept a team domain on any https host (tests that serve their own keys). Never set from a variable. */
  readonly anyTeamHost?: boolean;
}

/** Where the AUD tag is shown, said in each error about it. */
const AUD_WHERE =
  "copy the Application Audience (AUD) Tag from Zero Trust > Access > Applications > your application's Overview (64 hex characters)";

const TEAM_WHERE = 'your Zero Trust team domain, e.g. https://myteam.cloudflareaccess.com (the team domain in your Zero Trust settings)';

/** One DNS label: what a team name can be. */
const TEAM_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Both settings, from the Worker's vars; a missing or malformed one is a configuration error that names the fix. */
export function readAccessSettings(vars: AccessVars, options: AccessSettingsOptions = {}): AccessSettings {
  return { teamDomain: teamDomainOf(vars.ACCESS_TEAM_DOMAIN, options), audience: audienceOf(vars.ACCESS_AUD) };
}

/** ACCESS_TEAM_DOMAIN as the issuer origin, `https://<team>.cloudflareaccess.com`. */
export function teamDomainOf(text: string | undefined, options: AccessSettingsOptions = {}): string {
  const value = (text ?? '').trim();
  if (value === '') throw new Error(`configuration: ACCESS_TEAM_DOMAIN is required for Cloudflare Access sign-in: set it to ${TEAM_WHERE}`);
  const refuse = (why: string): never => {
    throw new Error(`configuration: ACCESS_TEAM_DOMAIN ${why}, got ${JSON.stringify(text)}: set it to ${TEAM_WHERE}`);
  };
  // The bare host, as the dashboard shows it, is read as https: Access serves nothing else.
  const withScheme = /^[a-z][a-z0-9+.-]*:/i.test(value) ? value : `https://${value}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return refuse('is not a URL');
  }
  if (url.protocol !== 'https:') refuse('must be an https:// origin');
  if (url.username !== '' || url.password !== '') refuse('must hold no credentials');
  if (url.port !== '') refuse('must have no port');
  // `new URL` gives every origin the path `/`; one trailing `/` is the same origin, anything more is not.
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || /[?#]/.test(withScheme)) {
    refuse('must be the origin alone (no path, query or fragment)');
  }
  if (!options.anyTeamHost) {
    const suffix = '.cloudflareaccess.com';
    const team = url.hostname.endsWith(suffix) ? url.hostname.slice(0, -suffix.length) : null;
    if (team === null || !TEAM_LABEL.test(team)) refuse('must be <team>.cloudflareaccess.com');
  }
  return url.origin;
}

/** ACCESS_AUD, lower-cased: Access shows and signs it in lower-case hex. */
export function audienceOf(text: string | undefined): string {
  const value = (text ?? '').trim();
  if (value === '') throw new Error(`configuration: ACCESS_AUD is required for Cloudflare Access sign-in: ${AUD_WHERE}`);
  if (!/^[0-9a-f]{64}$/i.test(value))
    throw new Error(`configuration: ACCESS_AUD must be 64 hex characters, got ${JSON.stringify(text)}: ${AUD_WHERE}`);
  return value.toLowerCase();
}
