/**
 * Who an identity source says is signing in (AUTH=oauth): the upstream's verified answer,
 * before the consent page shows it and the grant is made for it. Every source — an OpenID
 * Connect issuer, Cloudflare Access, GitHub — ends in one of these, and one function names the
 * principal it becomes, so that two sources (or two issuers) can never name the same user.
 */

export type IdentitySource = 'oidc' | 'access' | 'github';

export interface SignedInIdentity {
  readonly source: IdentitySource;
  /**
   * Who vouches for the subject: an OpenID issuer's `iss`, the Access team's issuer
   * (`https://<team>.cloudflareaccess.com`), or `https://github.com`.
   */
  readonly issuer: string;
  /** The subject as the issuer names it, stable for the user: `sub`, or GitHub's numeric user id (never the login). */
  readonly subject: string;
  /** What the consent page shows of the user (escaped there): an e-mail address, a name or a login; never an identifier. */
  readonly display: string;
  /** Claims kept in the grant's props (they become the principal's `claims`): small, strings only. */
  readonly claims: Readonly<Record<string, string>>;
}

/**
 * The provider's user id for `identity`: the issuer and the subject, each percent-encoded, so
 * that no issuer or subject can make another pair's id (`#` splits them, and neither contains
 * one once encoded) and the id holds no `:`, which the provider's tokens use as their separator
 * (`<userId>:<grantId>:<secret>`). The principal is `oauth#<this>`.
 */
export function userIdOf(identity: Pick<SignedInIdentity, 'issuer' | 'subject'>): string {
  return `${encodeURIComponent(identity.issuer)}#${encodeURIComponent(identity.subject)}`;
}
