/**
 * How the Worker hands a principal to an object (src/auth/principal.ts): the encoding round-trips
 * every principal exactly, and an object's headers carry the client's own headers but never an
 * internal one the client sent — the principal header is the Worker's alone.
 */
import { describe, expect, it } from 'vitest';
import { ANONYMOUS, encodePrincipal, headersForObject, principalOf, type Principal } from '../../src/auth/principal.ts';
import { INTERNAL_HEADERS } from '../../src/core/wire.ts';

const principal = (id: string, claims: Record<string, unknown> = {}): Principal => ({
  id,
  subject: id.split('#')[1] ?? null,
  clientId: 'client',
  scopes: ['mcp'],
  claims,
});

describe('encodePrincipal / principalOf', () => {
  it.each([
    ['the anonymous principal', ANONYMOUS],
    ['a plain principal', principal('https://issuer.test#alice')],
    ['claims in any Unicode', principal('https://issuer.test#zoë', { name: 'Zoë 🦊', note: '"quoted" %41 \\ \n' })],
    ['header-hostile characters', principal('https://issuer.test#a,b;c=d', { cookie: 'x=1; y=2', crlf: '\r\nX-Evil: 1' })],
  ])('round-trips %s through a header value', (_name, value) => {
    const encoded = encodePrincipal(value);
    // A header value: visible ASCII only, nothing a proxy could split or fold.
    expect(encoded).toMatch(/^[\x21-\x7e]+$/);
    expect(principalOf(new Headers({ [INTERNAL_HEADERS.principal]: encoded }))).toEqual(value);
  });

  it('reads no principal header as the anonymous principal', () => {
    expect(principalOf(new Headers())).toBe(ANONYMOUS);
  });

  it('reads each header value as its own principal, whatever was read before', () => {
    const alice = principal('https://issuer.test#alice');
    const bob = principal('https://issuer.test#bob', { role: 'admin' });
    const read = (value: Principal) => principalOf(new Headers({ [INTERNAL_HEADERS.principal]: encodePrincipal(value) }));
    for (const value of [alice, alice, bob, ANONYMOUS, alice, bob, bob]) expect(read(value)).toEqual(value);
    expect(read(ANONYMOUS)).toBe(ANONYMOUS);
  });
});

describe('headersForObject', () => {
  const internal = Object.values(INTERNAL_HEADERS);

  it.each([
    ['as spelled', (name: string) => name],
    ['in lower case', (name: string) => name.toLowerCase()],
    ['in upper case', (name: string) => name.toUpperCase()],
  ])('drops every internal header a client sends (%s) and sets the principal itself', (_case, spell) => {
    const forged = encodePrincipal(principal('https://issuer.test#mallory'));
    const client = new Headers({ Accept: 'text/event-stream', 'Mcp-Session-Id': 'abc', 'X-Custom': 'kept' });
    for (const name of internal) client.set(spell(name), name === INTERNAL_HEADERS.principal ? forged : 'forged');
    // A name no object reads today may be read by a newer one during a deploy.
    client.set(spell('Mcp-Internal-Future'), 'forged');
    const alice = principal('https://issuer.test#alice');

    const headers = headersForObject(client, alice);

    expect(principalOf(headers)).toEqual(alice);
    for (const name of [...internal, 'Mcp-Internal-Future'].filter((name) => name !== INTERNAL_HEADERS.principal)) {
      expect(headers.has(name)).toBe(false);
    }
    expect(headers.get('accept')).toBe('text/event-stream');
    expect(headers.get('mcp-session-id')).toBe('abc');
    expect(headers.get('x-custom')).toBe('kept');
    // The client's headers are not changed: the Worker still reads them after forwarding.
    expect(client.get(INTERNAL_HEADERS.principal)).toBe(forged);
  });
});
