// The Worker of `npm run dev -- --env oidc`, for oidc-e2e's CIMD step, served by Miniflare (the
// workerd and the bindings wrangler derives from wrangler.toml's [env.oidc], the bundle exactly
// as `wrangler deploy --dry-run` makes it: bench/peers/workerd-host.mjs does the same) so that
// this script answers the Worker's outbound fetches. Why: a client ID metadata document (CIMD)
// must be at an https URL on a public host, and the server refuses any on a local or
// special-purpose host by design (src/core/special-purpose-address.ts, issue 42 finding 9), so
// no document served on this machine could ever be named. The client here names
// `https://cimd-client.example/…`: `.example` is reserved by RFC 2606 and never resolves, and it
// is in no special-purpose list, so the server judges it as any public host and fetches it.
// Miniflare's `outboundService` (every `fetch` the Worker makes) answers for that one host with
// the document, and passes every other request to the network as it is (the provider on
// 127.0.0.1). Nothing in src/ changes and nothing in it is told: the refusal stands as shipped,
// and no variable could loosen it anywhere.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { convertV4MiniflareOptions, Miniflare } from 'miniflare';
import { unstable_getMiniflareWorkerOptions } from 'wrangler';

const ROOT = resolve(import.meta.dirname, '../..');
export const CIMD_HOST = 'cimd-client.example';

/**
 * `request` sent on as it is. Rebuilt for this process's fetch (Miniflare's Request is of its
 * own undici), redirects handed back unfollowed: the Worker's fetch follows them itself.
 */
async function passOn(request) {
  const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer();
  const response = await fetch(request.url, { method: request.method, headers: request.headers, body, redirect: 'manual' });
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * The Worker on 127.0.0.1:`port` (MCP endpoint `url`), ready, with `vars` over [env.oidc]'s.
 * `documents` maps a path on CIMD_HOST to the JSON served there (the caller fills it in);
 * `fetched` lists every request the Worker made for that host (method and URL), `passed` every
 * other; `kv` is the OAUTH_KV namespace; `cleanUp` stops it and removes its state.
 */
export async function startCimdWorker({ port, vars }) {
  const documents = {};
  const url = new URL(`http://localhost:${port}/mcp`);
  const state = mkdtempSync(join(tmpdir(), 'oidc-cimd-'));
  const bundle = join(state, 'bundle');
  // On this process's Node (npm run's, the project's own: wrangler needs Node >= 22).
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules/wrangler/bin/wrangler.js'), 'deploy', '--dry-run', '--env', 'oidc', '--outdir', bundle],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  // Module rules are for sources, and wrangler has bundled them: one ES module.
  const { modulesRules: _sourceRules, ...workerOptions } = unstable_getMiniflareWorkerOptions(
    join(ROOT, 'wrangler.toml'),
    'oidc',
  ).workerOptions;
  const fetched = [];
  const passed = [];
  const outbound = async (request) => {
    if (new URL(request.url).hostname !== CIMD_HOST) {
      passed.push(`${request.method} ${request.url}`);
      return passOn(request);
    }
    fetched.push(`${request.method} ${request.url}`);
    const document = request.method === 'GET' ? documents[new URL(request.url).pathname] : undefined;
    if (document === undefined) return new Response('not found', { status: 404 });
    return Response.json(document, { headers: { 'Cache-Control': 'no-store' } });
  };
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      ...workerOptions,
      name: 'oidc-cimd',
      modules: true,
      modulesRoot: bundle,
      scriptPath: join(bundle, 'index.js'),
      bindings: { ...workerOptions.bindings, ...vars, MCP_RESOURCE: url.href },
      outboundService: outbound,
      host: '127.0.0.1',
      port,
      durableObjectsPersist: join(state, 'do'),
      kvPersist: join(state, 'kv'),
      // Miniflare would otherwise download Cloudflare's request.cf fixture.
      cf: false,
    }),
  );
  try {
    await mf.ready;
  } catch (error) {
    rmSync(state, { recursive: true, force: true });
    throw error;
  }
  const kv = await mf.getKVNamespace('OAUTH_KV');
  const cleanUp = async () => {
    await mf.dispose().catch(() => {});
    rmSync(state, { recursive: true, force: true });
  };
  return { url, documents, fetched, passed, kv, cleanUp };
}
