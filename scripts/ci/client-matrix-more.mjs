// The rest of the client matrix (scripts/ci/client-matrix.mjs runs the v2 client's three modes):
// this package's fork-safe transport under the v2 Client, the v1 SDK client
// (@modelcontextprotocol/sdk), and mcp-remote bridging a stdio client (the v1 Client over
// StdioClientTransport, as desktop hosts reach remote servers). Each calls `countdown` (five
// progress steps) and `confirm`, which asks the client (an elicitation).
//
// mcp-remote: the SDK client (v1 and v2) drops a progress notification that arrives in the same
// stdin read as the response after it (its progress handler runs a microtask late, the response
// deletes it first: modelcontextprotocol/typescript-sdk#2580). A bridge writes what it receives
// as it comes, so now and then the last step is lost in the client, not here; that leg reports
// the steps it saw and fails only if the result is missing.
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { ForkSafeTransport } from '../../dist/client/index.js';

const EXPECTED = '[1,2,3,4,5]';

async function exercise(label, client, connect, { strictProgress = true } = {}) {
  const asked = [];
  await connect(asked);
  try {
    const progress = [];
    const countdown = await client.callTool(
      { name: 'countdown', arguments: { from: 5, interval_ms: 200 } },
      ...(client instanceof ClientV2
        ? [{ onprogress: (p) => progress.push(p.progress) }]
        : [undefined, { onprogress: (p) => progress.push(p.progress) }]),
    );
    const confirm = await client.callTool({ name: 'confirm', arguments: { action: 'deploy' } });
    const results = [countdown.content?.[0]?.text, confirm.content?.[0]?.text];
    const steps = JSON.stringify(progress);
    console.log(
      `${label.padEnd(26)} countdown progress ${steps} → ${JSON.stringify(results[0])}; confirm asked ${JSON.stringify(asked)} → ${JSON.stringify(results[1])}`,
    );
    if (results[0] !== 'liftoff after 5') throw new Error(`${label}: countdown result`);
    if (steps !== EXPECTED) {
      if (strictProgress) throw new Error(`${label}: countdown progress ${steps}`);
      console.log(`${''.padEnd(26)} (steps lost in the stdio client: typescript-sdk#2580)`);
    }
    if (asked.length !== 1 || results[1] !== 'confirmed: deploy') throw new Error(`${label}: confirm`);
  } finally {
    await client.close();
  }
}

export async function moreClients(url) {
  const v2 = new ClientV2({ name: 'matrix-fork-safe', version: '1' }, { capabilities: { elicitation: {} } });
  await exercise('fork-safe transport (v2)', v2, async (asked) => {
    v2.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { ok: true } };
    });
    await v2.connect(new ForkSafeTransport(url));
  });

  const answering = (client) => (asked) =>
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { ok: true } };
    });

  const v1 = new ClientV1({ name: 'matrix-v1', version: '1' }, { capabilities: { elicitation: {} } });
  await exercise('sdk v1 client', v1, async (asked) => {
    answering(v1)(asked);
    await v1.connect(new HttpV1(new URL(url)));
  });

  const bridged = new ClientV1({ name: 'matrix-mcp-remote', version: '1' }, { capabilities: { elicitation: {} } });
  await exercise(
    'mcp-remote + stdio client',
    bridged,
    async (asked) => {
      answering(bridged)(asked);
      await bridged.connect(
        new StdioClientTransport({ command: 'npx', args: ['mcp-remote', url, '--transport', 'http-only'], stderr: 'ignore' }),
      );
    },
    { strictProgress: false },
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await moreClients(process.argv[2] ?? 'http://localhost:8787/mcp');
}
