// The official client's OAuth provider for the end-to-end scripts (oauth-e2e, oidc-e2e,
// oidc-browser): one user's client, everything it is given kept in memory, and the URL it would
// send its user to kept for the script to follow.

/**
 * One user's OAuth client (DCR, PKCE); `store.authorizationUrl` is where it sends the user. With
 * `clientMetadataUrl`, the SDK sends that URL as its `client_id` (CIMD) instead of registering,
 * when the server's metadata says `client_id_metadata_document_supported`.
 */
export function oauthClient(name, { redirect, clientName = name, clientMetadataUrl }) {
  const store = { name };
  store.provider = {
    ...(clientMetadataUrl !== undefined && { clientMetadataUrl }),
    get redirectUrl() {
      return redirect;
    },
    get clientMetadata() {
      return { client_name: clientName, redirect_uris: [redirect], token_endpoint_auth_method: 'none' };
    },
    clientInformation: () => store.client,
    saveClientInformation: (client) => {
      store.client = client;
    },
    tokens: () => store.tokens,
    saveTokens: (tokens) => {
      store.tokens = tokens;
    },
    codeVerifier: () => store.verifier,
    saveCodeVerifier: (verifier) => {
      store.verifier = verifier;
    },
    discoveryState: () => store.discovery,
    saveDiscoveryState: (discovery) => {
      store.discovery = discovery;
    },
    invalidateCredentials: (scope) => {
      if (scope === 'all' || scope === 'tokens') delete store.tokens;
      if (scope === 'all' || scope === 'client') delete store.client;
    },
    redirectToAuthorization: (where) => {
      store.authorizationUrl = where;
    },
  };
  return store;
}

/** The countdown tool's progress and result, as one line. */
