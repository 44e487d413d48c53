import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { messages, openSession, toolCall } from '../support/mcp-http.ts';

describe('review: alarm on a session stored by the older version', () => {
  it('retention alarm before any request revives the session', async () => {
    const session = await openSession();
    await messages(await session.call('tools/call', toolCall('echo', { text: 'hi' })));
    const stub = () => env.MCP_SESSION.get(env.MCP_SESSION.idFromName(session.id));
    await runInDurableObject(stub(), (_i, state) => {
      state.storage.sql.exec(`DROP TABLE event_parts`);
      state.storage.sql.exec(`DELETE FROM schema_migrations WHERE id = 2`);
    });
    const before = await runInDurableObject(stub(), (_i, state) => state.storage.getAlarm());
    console.log('alarm scheduled at', before, 'now', Date.now());
    await abortAllDurableObjects();
    let error: unknown;
    try {
      const ran = await runDurableObjectAlarm(stub());
      console.log('alarm ran', ran);
    } catch (e) {
      error = e;
    }
    console.log('alarm error:', String(error));
    const after = await runInDurableObject(stub(), (_i, state) => state.storage.getAlarm());
    console.log('alarm after', after);
    expect(error).toBeUndefined();
    expect(after).not.toBeNull();
  });
});
