/**
 * Placement (core/placement.ts) as tables: DO_JURISDICTION and DO_LOCATION_HINT → a placement or
 * the configuration error that names the variable and every value it may take; and a namespace
 * placed, through a recording fake: the jurisdiction is asked for once and every id comes from
 * it, every stub is got with the hint, and a namespace with no placement is the binding itself.
 */
import { describe, expect, it } from 'vitest';
import { MisconfiguredError } from '../../src/core/misconfiguration.ts';
import {
  isPlaced,
  JURISDICTIONS,
  LOCATION_HINTS,
  type Placement,
  type PlacementVars,
  placeNamespace,
  readPlacement,
} from '../../src/core/placement.ts';

describe('readPlacement', () => {
  it.each(JURISDICTIONS)('DO_JURISDICTION = %j', (jurisdiction) => {
    expect(readPlacement({ DO_JURISDICTION: jurisdiction })).toEqual({ jurisdiction });
  });

  it.each(LOCATION_HINTS)('DO_LOCATION_HINT = %j', (locationHint) => {
    expect(readPlacement({ DO_LOCATION_HINT: locationHint })).toEqual({ locationHint });
  });

  it.each<{ vars: PlacementVars; placement: Placement }>([
    { vars: {}, placement: {} },
    { vars: { DO_JURISDICTION: '', DO_LOCATION_HINT: '' }, placement: {} },
    { vars: { DO_JURISDICTION: '   ' }, placement: {} },
    { vars: { DO_JURISDICTION: ' eu ' }, placement: { jurisdiction: 'eu' } },
    { vars: { DO_JURISDICTION: 'eu', DO_LOCATION_HINT: 'weur' }, placement: { jurisdiction: 'eu', locationHint: 'weur' } },
    { vars: { DO_JURISDICTION: 'fedramp', DO_LOCATION_HINT: 'enam' }, placement: { jurisdiction: 'fedramp', locationHint: 'enam' } },
  ])('$vars → $placement', ({ vars, placement }) => {
    expect(readPlacement(vars)).toEqual(placement);
  });

  it.each<{ vars: PlacementVars; names: string }>([
    { vars: { DO_JURISDICTION: 'EU' }, names: 'DO_JURISDICTION' },
    { vars: { DO_JURISDICTION: 'Eu' }, names: 'DO_JURISDICTION' },
    { vars: { DO_JURISDICTION: 'europe' }, names: 'DO_JURISDICTION' },
    { vars: { DO_JURISDICTION: 'fedramp_high' }, names: 'DO_JURISDICTION' },
    { vars: { DO_JURISDICTION: 'eu,us' }, names: 'DO_JURISDICTION' },
    { vars: { DO_JURISDICTION: 'weur' }, names: 'DO_JURISDICTION' },
    { vars: { DO_LOCATION_HINT: 'WEUR' }, names: 'DO_LOCATION_HINT' },
    { vars: { DO_LOCATION_HINT: 'eu' }, names: 'DO_LOCATION_HINT' },
    { vars: { DO_LOCATION_HINT: 'apac-sw' }, names: 'DO_LOCATION_HINT' },
    { vars: { DO_JURISDICTION: 'eu', DO_LOCATION_HINT: 'europe' }, names: 'DO_LOCATION_HINT' },
    // A [vars] entry may be JSON: a number or a table is no jurisdiction either.
    { vars: { DO_JURISDICTION: 1 as unknown as string }, names: 'DO_JURISDICTION' },
  ])('$vars: a configuration error naming $names and every value it takes', ({ vars, names }) => {
    const allowed = names === 'DO_JURISDICTION' ? JURISDICTIONS : LOCATION_HINTS;
    let message = '';
    try {
      readPlacement(vars);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(new RegExp(`^configuration: ${names} `));
    expect(message).toContain(`one of ${allowed.join(', ')}, or unset for none`);
    expect(message).toContain(JSON.stringify(vars[names as keyof PlacementVars]));
  });
});

/** A namespace that records what is asked of it, and of the jurisdiction's namespace it answers. */
function recordingNamespace(options: { restrictable?: boolean; refuse?: string } = {}) {
  const calls: string[] = [];
  const namespace = (where: string) => ({
    idFromName: (name: string) => {
      calls.push(`${where}.idFromName(${name})`);
      return { where, name };
    },
    get: (...args: unknown[]) => {
      calls.push(`${where}.get(${args.map((arg) => JSON.stringify(arg)).join(', ')})`);
      return { stub: args[0] };
    },
  });
  const raw = {
    ...namespace('raw'),
    ...(options.restrictable !== false && {
      jurisdiction: (jurisdiction: string) => {
        calls.push(`raw.jurisdiction(${jurisdiction})`);
        if (options.refuse !== undefined) throw new Error(options.refuse);
        return namespace(jurisdiction);
      },
    }),
  };
  return { raw, calls };
}

describe('placeNamespace', () => {
  it('no placement: the namespace itself, nothing asked of it', () => {
    const { raw, calls } = recordingNamespace();
    expect(placeNamespace(raw, readPlacement({}))).toBe(raw);
    expect(calls).toEqual([]);
  });

  it.each<{ placement: Placement; calls: string[] }>([
    {
      placement: { jurisdiction: 'eu' },
      calls: [
        'raw.jurisdiction(eu)',
        'eu.idFromName(a)',
        'eu.get({"where":"eu","name":"a"})',
        'eu.idFromName(b)',
        'eu.get({"where":"eu","name":"b"})',
      ],
    },
    {
      placement: { locationHint: 'weur' },
      calls: [
        'raw.idFromName(a)',
        'raw.get({"where":"raw","name":"a"}, {"locationHint":"weur"})',
        'raw.idFromName(b)',
        'raw.get({"where":"raw","name":"b"}, {"locationHint":"weur"})',
      ],
    },
    {
      placement: { jurisdiction: 'fedramp', locationHint: 'enam' },
      calls: [
        'raw.jurisdiction(fedramp)',
        'fedramp.idFromName(a)',
        'fedramp.get({"where":"fedramp","name":"a"}, {"locationHint":"enam"})',
        'fedramp.idFromName(b)',
        'fedramp.get({"where":"fedramp","name":"b"}, {"locationHint":"enam"})',
      ],
    },
  ])('$placement: the jurisdiction asked for once, every id from it, every stub got with the hint', ({ placement, calls }) => {
    const { raw, calls: seen } = recordingNamespace();
    const placed = placeNamespace(raw, placement);
    expect(placed).not.toBe(raw);
    for (const name of ['a', 'b']) placed.get(placed.idFromName(name) as never);
    expect(seen).toEqual(calls);
  });

  it('one wrapper per namespace and placement: placed again, or its wrapper placed again, it is the same object', () => {
    const { raw, calls } = recordingNamespace();
    const placed = placeNamespace(raw, { jurisdiction: 'eu', locationHint: 'weur' });
    expect(isPlaced(placed)).toBe(true);
    expect(isPlaced(raw)).toBe(false);
    expect(placeNamespace(raw, { jurisdiction: 'eu', locationHint: 'weur' })).toBe(placed);
    // A placed namespace is not restricted twice, whatever placement it is given again.
    expect(placeNamespace(placed, { jurisdiction: 'us' })).toBe(placed);
    expect(calls).toEqual(['raw.jurisdiction(eu)']);
    expect(placeNamespace(raw, { jurisdiction: 'eu' })).not.toBe(placed);
  });

  it('a runtime that refuses the jurisdiction: the configuration error, naming DO_JURISDICTION, the binding and the fix', () => {
    const { raw } = recordingNamespace({ refuse: 'Jurisdiction restrictions are not implemented in workerd.' });
    let thrown: unknown;
    try {
      placeNamespace(raw, { jurisdiction: 'eu' }, 'MCP_SESSION');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(MisconfiguredError);
    const [problem] = (thrown as MisconfiguredError).problems;
    expect(problem!.subject).toBe('DO_JURISDICTION');
    expect(problem!.detail).toContain('DO_JURISDICTION is "eu", and the runtime refused it for MCP_SESSION');
    expect(problem!.detail).toContain('"Jurisdiction restrictions are not implemented in workerd."');
    expect(problem!.detail).toContain('`DO_JURISDICTION=` in .dev.vars');
  });

  it('the platform refusing a jurisdiction: the error says to choose another, not the local fix', () => {
    const { raw } = recordingNamespace({ refuse: 'jurisdiction not allowed for this account' });
    expect(() => placeNamespace(raw, { jurisdiction: 'fedramp-high' }, 'MCP_EVENTS')).toThrow(
      'server misconfigured: DO_JURISDICTION is "fedramp-high", and the runtime refused it for MCP_EVENTS ("jurisdiction not allowed for this account"). ' +
        'Set DO_JURISDICTION to a jurisdiction this account may use (eu, fedramp, fedramp-high, us), or unset it',
    );
  });

  it('a namespace without jurisdiction(): the configuration error naming the binding', () => {
    const { raw } = recordingNamespace({ restrictable: false });
    expect(() => placeNamespace(raw, { jurisdiction: 'eu' }, 'MCP_TASKS')).toThrow(
      /MCP_TASKS has no jurisdiction\(\): give createMcpWorker the binding itself/,
    );
    // A hint alone needs no jurisdiction().
    expect(() => placeNamespace(raw, { locationHint: 'weur' }, 'MCP_TASKS')).not.toThrow();
  });
});
