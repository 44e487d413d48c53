// The official Node client (@modelcontextprotocol/sdk v1) against a running server:
// lists tools, then calls countdown {from: 5, interval_ms: 100} with onprogress.
// Usage: node scripts/ci/sdk-client-check.mjs [url]   (default http://localhost:8787/mcp)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export async function checkWithSdkClient(url) {
  const client = new Client({ name: 'sdk-client-check', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    for (const expected of ['countdown', 'tally']) {
      if (!names.includes(expected)) throw new Error(`tools/list lacks ${expected}: ${names.join(', ')}`);
    }
    const progress = [];
    const result = await client.callTool({ name: 'countdown', arguments: { from: 5, interval_ms: 100 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    const text = result.content?.[0]?.text;
    console.log(`sdk client: ${tools.length} tools; countdown progress ${JSON.stringify(progress)}; result ${JSON.stringify(text)}`);
    if (JSON.stringify(progress) !== '[1,2,3,4,5]' || text !== 'liftoff after 5') {
      throw new Error('countdown did not deliver 5 progress notifications and then its result');
    }
  } finally {
    await client.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await checkWithSdkClient(process.argv[2] ?? 'http://localhost:8787/mcp');
}
