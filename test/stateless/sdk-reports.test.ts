/**
 * What the SDK's 2026-07-28 handler reports goes to the log sorted (stateless/sdk-reports.ts):
 * a request it refused is `mcp.modern.rejected`, on the ordinary stream; anything else is
 * `mcp.modern.error`, on the error stream. The table holds the SDK's wordings; the requests
 * below make the SDK itself report, so a rewording in an SDK upgrade fails here.
 */
import { MissingRequiredClientCapabilityError, UnsupportedProtocolVersionError } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { isRefusal, sdkReport } from '../../src/stateless/sdk-reports.ts';
import { MODERN, modernRequest, postModernRaw } from '../support/modern-http.ts';
import { captureLogLines } from '../support/log-lines.ts';

describe('isRefusal', () => {
  it.each([
    {
      name: 'an unsupported revision',
      error: new UnsupportedProtocolVersionError({ supported: [MODERN], requested: '2099-01-01' }),
      refusal: true,
    },
    {
      name: 'an undeclared capability',
      error: new MissingRequiredClientCapabilityError({ requiredCapabilities: { elicitation: {} } }),
      refusal: true,
    },
    { name: 'a refused body', error: new Error('Rejected inbound request (invalid-json-rpc-body): Bad Request: …'), refusal: true },
    { name: 'a refused header', error: new Error('Rejected inbound request (mcp-method-mismatch): Bad Request: …'), refusal: true },
    {
      name: 'a 2025 request on the modern endpoint',
      error: new Error('Rejected 2025-era request on a modern-only endpoint (x): y'),
      refusal: true,
    },
    { name: 'a media type', error: new Error('Unsupported Media Type: Content-Type must be application/json'), refusal: true },
    { name: 'a handler that threw', error: new TypeError("Cannot read properties of undefined (reading 'x')"), refusal: false },
    { name: 'a failure whose message quotes a refusal', error: new Error('bus: Rejected inbound request (x)'), refusal: false },
    { name: 'not an Error', error: 'Rejected inbound request (x): y', refusal: false },
  ])('$name: $refusal', ({ error, refusal }) => {
    expect(isRefusal(error)).toBe(refusal);
    expect(sdkReport(error).msg).toBe(refusal ? 'mcp.modern.rejected' : 'mcp.modern.error');
  });
});

describe('what the SDK reports, through the Worker', () => {
  const lines = captureLogLines();

  const modernLines = () => lines().filter(({ line }) => typeof line.msg === 'string' && line.msg.startsWith('mcp.modern.'));

  it.each([
    {
      name: 'a body that is not JSON-RPC',
      send: () => postModernRaw('{}'),
    },
    {
      name: 'an Mcp-Method header that disagrees with the body',
      send: () => modernRequest('tools/list', {}, {}, { 'Mcp-Method': 'tools/call' }),
    },
  ])('$name: answered 4xx, logged once as rejected, nothing on the error stream', async ({ send }) => {
    const response = await send();
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    await response.body?.cancel();
    expect(modernLines()).toEqual([{ stream: 'out', line: { msg: 'mcp.modern.rejected', reason: expect.any(String) } }]);
  });
});
