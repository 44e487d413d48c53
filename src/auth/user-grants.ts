/**
 * A user's grants at the embedded authorization server (AUTH=oauth), every page of them: what a
 * revocation checks (was this grant revoked?) and walks (revoke each).
 */
import type { OAuthHelpers } from '@cloudflare/workers-oauth-provider';

export async function userGrantIds(helpers: OAuthHelpers, userId: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await helpers.listUserGrants(userId, cursor === undefined ? {} : { cursor });
    for (const { id } of page.items) ids.push(id);
    cursor = page.cursor;
  } while (cursor !== undefined);
  return ids;
}
