// What the webhook fault runs share (webhook-soak.mjs, webhook-restarts.mjs): the fixture server
// under `wrangler dev` with AUTH=jwt (only an authenticated principal may subscribe) under a key
// made for the run, its state persisted so a SIGKILLed server starts again on it, the receiver's
// origin its one WEBHOOK_DEV_ORIGINS entry; a principal's token; the requests a client sends
// (`post_note` with the note's own eventId, retried until stored: the log deduplicates the id,
// so a call cut by a kill is never a second occurrence; `events/subscribe`, which also refreshes).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { killGroup, startPersistedFixture } from '../support/dev-server.mjs';
import { answerOf, modernHeaders, modernMeta } from './task-follow-raw.mjs';

const ISSUER = 'https://webhook-faults.invalid';

/** A server on `port` delivering to `receiverOrigin`; `start()` (again after a kill), `kill()`, `close()`. */
export async function webhookServer({ port, receiverOrigin, vars = {} }) {
  const url = `http://localhost:${port}/mcp`;
  const state = mkdtempSync(join(tmpdir(), 'webhook-faults-'));
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'faults', alg: 'ES256', use: 'sig' }] };
  const token = await new SignJWT({ scope: 'mcp' })
    .setProtectedHeader({ alg: 'ES256', kid: 'faults' })
    .setIssuer(ISSUER)
    .setSubject('webhook-faults')
    .setAudience(url)
    .setIssuedAt()
    .setExpirationTime('4h')
    .sign(privateKey);
  const allVars = {
    AUTH: 'jwt',
    AUTH_ISSUER: ISSUER,
    AUTH_JWKS: JSON.stringify(jwks),
    AUTH_SCOPES: 'mcp',
    WEBHOOK_DEV_ORIGINS: receiverOrigin,
    ...vars,
  };
  let dev;
  let nextId = 1;

  async function request(method, params, name) {
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...modernHeaders(method, name), Authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: modernMeta('webhook-faults') } }),
      signal: AbortSignal.timeout(30_000),
    });
    return answerOf(response);
  }

  return {
    url,
    async start() {
      dev = await startPersistedFixture({ port, state, vars: allVars });
    },
    async kill() {
      if (dev !== undefined) await killGroup(dev);
      dev = undefined;
    },
    async close() {
      if (dev !== undefined) await killGroup(dev).catch(() => {});
      dev = undefined;
      rmSync(state, { recursive: true, force: true });
    },
    request,
    /** Posts note `<tag> <i>` with eventId `<tag>-<i>`, retried until stored; its eventId. */
    async postNote(tag, i) {
      const eventId = `${tag}-${i}`;
      for (let attempt = 0; attempt < 60; attempt++) {
        const answer = await request('tools/call', { name: 'post_note', arguments: { text: `${tag} ${i}`, eventId } }, 'post_note').catch(
          () => undefined,
        );
        if (answer?.result?.structuredContent?.eventId === eventId) return eventId;
        await sleep(500);
      }
      throw new Error(`note ${i} was never stored`);
    },
    /** `events/subscribe` to the notes tagged `tag` at `receiverOrigin + path` (a refresh when it exists); the result. */
    async subscribe({ tag, path, secret, ttlMs, cursor = null }) {
      const answer = await request(
        'events/subscribe',
        { name: 'demo.note', arguments: { contains: tag }, delivery: { url: `${receiverOrigin}${path}`, secret }, ttlMs, cursor },
        'demo.note',
      );
      if (typeof answer?.result?.id !== 'string') throw new Error(`events/subscribe answered ${JSON.stringify(answer)}`);
      return answer.result;
    },
  };
}
