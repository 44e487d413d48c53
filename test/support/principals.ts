/**
 * The principal registry from a test: unique principals (so tests share no registry), their
 * tokens' headers (AUTH=jwt), and the operator's routes with the project's ADMIN_TOKEN.
 */
import { fetchWorker } from './mcp-http.ts';
import { TEST_ADMIN_TOKEN, TEST_ISSUER, tokenFor } from './tokens.ts';

/** A subject no other test uses, its principal id, and the headers of its requests. */
export async function newPrincipal(name: string): Promise<{ subject: string; id: string; auth: Record<string, string> }> {
  const subject = `${name}-${crypto.randomUUID()}`;
  return { subject, id: `${TEST_ISSUER}#${subject}`, auth: { Authorization: `Bearer ${await tokenFor(subject)}` } };
}

/** An operator's request to `/admin/principals/{principal}{rest}`. */
export function admin(method: string, principal: string, rest = '', token = TEST_ADMIN_TOKEN): Promise<Response> {
  return fetchWorker(
    { method, headers: { Host: 'localhost', Authorization: `Bearer ${token}` } },
    `http://localhost/admin/principals/${encodeURIComponent(principal)}${rest}`,
  );
}

/** What the registry holds for `principal`, as the operator lists it. */
export async function holdings(principal: string): Promise<{ sessions: { id: string }[]; tasks: { id: string; expiresAt: string }[] }> {
  const response = await admin('GET', principal);
  if (response.status !== 200) throw new Error(`admin list: ${response.status} ${await response.text()}`);
  return response.json();
}

/** Polls until `check` holds (the Worker forgets a deleted session after its response, in waitUntil). */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await scheduler.wait(25);
  }
}
