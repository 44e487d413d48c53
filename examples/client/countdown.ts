/**
 * The fork-safe transport with the official MCP client (README, "A client that cannot fork"):
 * `countdown` with its progress, across dropped connections. `fetch` is for the test that runs
 * this example (test/client/example.test.ts); a real client leaves it out.
 */
import { Client } from '@modelcontextprotocol/client';
import { ForkSafeTransport, type FetchLike } from 'mcp-edge-sessions/client';

export async function countdown(url: string, fetch?: FetchLike): Promise<{ steps: number[]; text: string }> {
  const client = new Client({ name: 'my-client', version: '1.0.0' });
  await client.connect(new ForkSafeTransport(url, { ...(fetch && { fetch }) }));
  const steps: number[] = [];
  const result = await client.callTool(
    { name: 'countdown', arguments: { from: 5, interval_ms: 50 } },
    { onprogress: ({ progress }) => steps.push(progress) },
  );
  await client.close();
  // A connection cut mid-call was resumed (GET + Last-Event-ID) and checked to continue the
  // same stream; anything else would have thrown ForkDetectedError, never been merged.
  return { steps, text: (result.content as { text: string }[])[0]!.text };
}
