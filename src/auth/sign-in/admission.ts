/**
 * Who of those the issuer vouches for may sign in (OIDC_ALLOWED_EMAIL_DOMAINS,
 * OIDC_REQUIRED_GROUP): a pure function of the ID token's claims, the reason to refuse or
 * undefined. An e-mail counts only if the issuer says it verified it (`email_verified: true`):
 * most issuers let a user type any address, and one at the allowed domain would otherwise do.
 * Groups are read from a `groups` claim (Okta, Keycloak, Authentik, Entra with the groups claim
 * configured): an array of strings, or one string.
 */
import type { Admission } from './sign-in-config.ts';

export function admissionRefusal(claims: Record<string, unknown>, admission: Admission): string | undefined {
  if (admission.emailDomains.length > 0) {
    const email = typeof claims.email === 'string' ? claims.email.toLowerCase() : undefined;
    if (email === undefined) return 'Your identity provider did not say your e-mail address, and this server admits only some domains';
    if (claims.email_verified !== true)
      return `Your identity provider has not verified ${email}, and this server admits only verified addresses`;
    const domain = email.slice(email.lastIndexOf('@') + 1);
    if (!email.includes('@') || !admission.emailDomains.includes(domain))
      return `${email} is not in a domain this server admits (${admission.emailDomains.join(', ')})`;
  }
  if (admission.group !== undefined) {
    const groups = Array.isArray(claims.groups) ? claims.groups : typeof claims.groups === 'string' ? [claims.groups] : [];
    if (!groups.includes(admission.group))
      return `This server admits members of the group ${admission.group}, and your sign-in does not say you are one`;
  }
  return undefined;
}
