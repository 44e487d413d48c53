/**
 * The route of a request to a session object (core/wire.ts, objectRouteOf): looked up for a URL
 * spelled as the Worker and the principal registry spell it, parsed for any other, and the same
 * either way.
 */
import { describe, expect, it } from 'vitest';
import { OBJECT_ROUTES, objectRouteOf, SESSION_ORIGIN } from '../../src/core/wire.ts';

describe('objectRouteOf', () => {
  it.each(Object.values(OBJECT_ROUTES))('reads %s from the URL its senders use', (route) => {
    expect(objectRouteOf(`${SESSION_ORIGIN}${route}`)).toBe(route);
  });

  it.each([
    ['a query', `${SESSION_ORIGIN}/session?x=1`, '/session'],
    ['a fragment', `${SESSION_ORIGIN}/relay#x`, '/relay'],
    ['dot segments', `${SESSION_ORIGIN}/x/../probe`, '/probe'],
    ['another origin', 'http://example.com/end', '/end'],
    ['an unknown path', `${SESSION_ORIGIN}/sessions`, '/sessions'],
  ])('parses a URL with %s as any URL', (_name, url, route) => {
    expect(objectRouteOf(url)).toBe(route);
    expect(objectRouteOf(url)).toBe(new URL(url).pathname);
  });
});
