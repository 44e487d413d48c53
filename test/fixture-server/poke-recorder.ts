/**
 * A stand-in for a webhook subscription's object (`McpWebhookSubscription`), for the tests of an
 * event log's fan-out (test/events/log-subscribers.test.ts): bound as MCP_POKE_RECORDER, one
 * object per subscriber id as the real one is, it answers `poke` as the test told it — `processed`
 * (the default), `gone`, a throw, or held until the test releases it — and records every poke it
 * got, in memory (a restart forgets them, as it forgets the pokes in flight).
 */
import { DurableObject } from 'cloudflare:workers';
import type { Poke, PokeAnswer } from '../../src/events/webhook-subscriptions.ts';

export type RecorderMode = 'processed' | 'gone' | 'throw' | 'hold';

export class PokeRecorder extends DurableObject {
  #mode: RecorderMode = 'processed';
  readonly #pokes: Poke[] = [];
  readonly #held: (() => void)[] = [];

  async poke(poke: Poke): Promise<PokeAnswer> {
    this.#pokes.push(poke);
    switch (this.#mode) {
      case 'gone':
        return 'gone';
      case 'throw':
        throw new Error('poke refused (test)');
      case 'hold':
        await new Promise<void>((resolve) => this.#held.push(resolve));
        return 'processed';
      default:
        return 'processed';
    }
  }

  /** How the next pokes are answered. */
  answer(mode: RecorderMode): void {
    this.#mode = mode;
  }

  /** Every poke received since this instance started. */
  pokes(): Poke[] {
    return this.#pokes;
  }

  /** How many pokes are held, waiting for release. */
  heldCount(): number {
    return this.#held.length;
  }

  /** Answers every held poke `processed`; later pokes are answered `processed` too. */
  release(): void {
    this.#mode = 'processed';
    for (const resolve of this.#held.splice(0)) resolve();
  }
}
