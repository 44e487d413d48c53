/** The requestState seal on its own: key rotation, key length, and what a state is bound to. */
import type { ServerContext } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { bindingOf, requestStateSeal } from '../../src/stateless/request-state.ts';

const KEY_A = 'a'.repeat(32);
const KEY_B = 'b'.repeat(32);

const contextOf = (method: string, name?: string, principal?: string) =>
  ({
    mcpReq: { method },
    http: {
      req: new Request('http://localhost/mcp', { headers: name === undefined ? {} : { 'Mcp-Name': name } }),
      ...(principal !== undefined && { authInfo: { token: '', clientId: '', scopes: [], extra: { principal: { id: principal } } } }),
    },
  }) as unknown as ServerContext;

describe('requestStateSeal', () => {
  it('during a rotation, a state minted under the previous key is still honoured', async () => {
    const ctx = contextOf('tools/call', 'deploy');
    const state = await requestStateSeal({ REQUEST_STATE_KEY: KEY_A }).mint({ round: 1 }, ctx);
    const rotating = requestStateSeal({ REQUEST_STATE_KEY: KEY_B, REQUEST_STATE_KEY_PREVIOUS: KEY_A });
    expect(await rotating.verify(state, ctx)).toEqual({ round: 1 });
  });

  it('after the rotation, it is refused', async () => {
    const ctx = contextOf('tools/call', 'deploy');
    const state = await requestStateSeal({ REQUEST_STATE_KEY: KEY_A }).mint({ round: 1 }, ctx);
    await expect(requestStateSeal({ REQUEST_STATE_KEY: KEY_B }).verify(state, ctx)).rejects.toThrow();
  });

  it('is bound to the method and the target', async () => {
    const seal = requestStateSeal({ REQUEST_STATE_KEY: KEY_A });
    const state = await seal.mint({ round: 1 }, contextOf('tools/call', 'deploy'));
    await expect(seal.verify(state, contextOf('tools/call', 'delete'))).rejects.toThrow();
    await expect(seal.verify(state, contextOf('prompts/get', 'deploy'))).rejects.toThrow();
    // The same target, sent in the header's base64 form, is the same binding.
    expect(await seal.verify(state, contextOf('tools/call', `=?base64?${btoa('deploy')}?=`))).toEqual({ round: 1 });
  });

  it('is bound to the principal: one minted for Alice is refused for Mallory, and for nobody', async () => {
    const seal = requestStateSeal({ REQUEST_STATE_KEY: KEY_A });
    const state = await seal.mint({ round: 1 }, contextOf('tools/call', 'deploy', 'issuer#alice'));
    expect(await seal.verify(state, contextOf('tools/call', 'deploy', 'issuer#alice'))).toEqual({ round: 1 });
    await expect(seal.verify(state, contextOf('tools/call', 'deploy', 'issuer#mallory'))).rejects.toThrow();
    await expect(seal.verify(state, contextOf('tools/call', 'deploy'))).rejects.toThrow();
  });

  it.each([
    ['REQUEST_STATE_KEY', { REQUEST_STATE_KEY: 'short' }],
    ['REQUEST_STATE_KEY_PREVIOUS', { REQUEST_STATE_KEY: KEY_A, REQUEST_STATE_KEY_PREVIOUS: 'x'.repeat(31) }],
  ])('refuses a %s under 32 bytes', (name, secrets) => {
    expect(() => requestStateSeal(secrets)).toThrow(`configuration: ${name} must be at least 32 bytes`);
  });

  it('refuses a previous key without a current one', () => {
    expect(() => requestStateSeal({ REQUEST_STATE_KEY_PREVIOUS: KEY_A })).toThrow(
      'REQUEST_STATE_KEY_PREVIOUS is set without REQUEST_STATE_KEY',
    );
  });

  it('binds a request with no Mcp-Name to its method and principal', () => {
    expect(bindingOf(contextOf('tools/list'))).toBe('tools/list\0\0anonymous');
    expect(bindingOf(contextOf('tools/list', undefined, 'issuer#alice'))).toBe('tools/list\0\0issuer#alice');
  });
});
