/**
 * The benchmark's 2026-07-28 tool list, as every peer that answers 2026-07-28 requests through the
 * SDK v2's `McpServer` registers it (`ours`, `modern-floor`, `sdk-modern`, and `sdk-floor`'s
 * tasks): the same names, descriptions and input schemas. A 2026-07-28 request builds its own
 * McpServer, so each tool registered is work every request pays for — measured, 3 tools instead
 * of 6 took 3–4.5% off ours' M1 CPU per call — and a floor that registers fewer than the peer
 * it is set against measures the list, not the transport. A peer gives the handlers of the tools
 * its workloads call; the others answer `isError` (none of its workloads calls them).
 *
 * Erasable TypeScript only: `sdk-modern` runs it on Node by type stripping.
 */
import type { CallToolResult, McpServer, ToolCallback } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { registerEcho, registerProgress } from './sdk-tools.ts';

const noteInput = z.object({ text: z.string() });
const progressInput = z.object({ n: z.number().int().min(0).max(1_000_000) });

/** The handlers a peer serves; `echo` and `progress` are sdk-tools.ts's everywhere. */
export interface ModernToolHandlers {
  /** M3: tells the peer's listen streams the tool list changed. */
  readonly changed?: ToolCallback;
  /** E1, E2, E4: emits one `demo.note` event. */
  readonly post_note?: ToolCallback<typeof noteInput>;
  /** T1, T2: a task that does nothing but complete. */
  readonly work?: ToolCallback;
  /** T3: a task sending n progress notifications. */
  readonly progress_task?: ToolCallback<typeof progressInput>;
  /** T4: a task that asks a question (input_required), then completes. */
  readonly ask?: ToolCallback;
}

/** What a tool answers on a peer that does not serve it. */
function unserved(name: string): () => CallToolResult {
  return () => ({ content: [{ type: 'text', text: `${name} is not served by this peer` }], isError: true });
}

export function registerModernTools(server: McpServer, handlers: ModernToolHandlers): void {
  registerEcho(server);
  registerProgress(server);
  server.registerTool(
    'changed',
    { description: 'Announces a tool list change to listeners (M3).' },
    handlers.changed ?? unserved('changed'),
  );
  server.registerTool(
    'post_note',
    { description: 'Emits one demo.note, stored before this returns (E1, E2, E4).', inputSchema: noteInput },
    handlers.post_note ?? unserved('post_note'),
  );
  server.registerTool('work', { description: 'A task that does nothing but complete (T1, T2).' }, handlers.work ?? unserved('work'));
  server.registerTool(
    'progress_task',
    {
      description: 'A task that sends n progress notifications as fast as possible, then returns "done <n>" (T3).',
      inputSchema: progressInput,
    },
    handlers.progress_task ?? unserved('progress_task'),
  );
  server.registerTool(
    'ask',
    { description: 'A task that asks to go on (input_required), then reports one step and completes (T4).' },
    handlers.ask ?? unserved('ask'),
  );
}
