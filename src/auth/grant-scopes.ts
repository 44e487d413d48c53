/**
 * What a consent step grants of the scopes a client asks for: those this server supports, and
 * nothing else. RFC 6749 §3.3: "The authorization server MAY fully or partially ignore the
 * scope requested by the client", and then "MUST include the scope response parameter" (the
 * provider's token response always names the scope it issued). Granting what is supported,
 * rather than refusing the request with `invalid_scope`, keeps working the clients that ask for
 * more than this server offers (`offline_access`, another server's scope). Scopes are compared
 * exactly: they are case-sensitive (§3.3).
 */
export interface ScopeGrant {
  /** In the order the client asked for them, each once. */
  readonly granted: readonly string[];
  /** Asked for, not offered by this server: shown to the user, never granted. */
  readonly refused: readonly string[];
}

export function grantScopes(requested: readonly string[], supported: readonly string[]): ScopeGrant {
  const offered = new Set(supported);
  const asked = [...new Set(requested)];
  return { granted: asked.filter((scope) => offered.has(scope)), refused: asked.filter((scope) => !offered.has(scope)) };
}
