/**
 * The webhook tests' receiver (scripts/support/webhook-test-receiver.mjs), driven from a test:
 * an endpoint of the test's own (`/hook/<name>`, a fresh name per test so files running at once
 * never share one), its script set, its log read back, and each record's signature checked with
 * the library's own verifier, so the receiver itself trusts nothing.
 */
import { env } from 'cloudflare:workers';
import { parseWebhookSecret, verifyWebhook } from '../../src/core/webhook-signature.ts';

export type Behaviour =
  | { kind: 'ok' }
  | { kind: 'wrong' }
  | { kind: 'status'; status: number }
  | { kind: 'redirect'; status?: number; location: string }
  | { kind: 'slow'; delayMs: number; then?: Behaviour }
  | { kind: 'drop' }
  | { kind: 'big'; bytes: number };

export interface Received {
  readonly at: number;
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly answered: number | string | null;
}

const origin = () => (env as unknown as { WEBHOOK_RECEIVER: string }).WEBHOOK_RECEIVER;

/** A fresh endpoint: its URL, its script, its log. */
export function endpoint(label: string) {
  const name = `${label}-${crypto.randomUUID()}`;
  return {
    name,
    url: `${origin()}/hook/${name}`,
    async script(script: Behaviour[], otherwise: Behaviour = { kind: 'ok' }): Promise<void> {
      const response = await fetch(`${origin()}/_control/${name}`, { method: 'PUT', body: JSON.stringify({ script, otherwise }) });
      if (response.status !== 204) throw new Error(`receiver control answered ${response.status}`);
    },
    async log(): Promise<Received[]> {
      return (await fetch(`${origin()}/_log/${name}`)).json();
    },
  };
}

/** A `whsec_` secret of 32 random bytes. */
export function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

/** Whether `record` is signed under `secret` (Standard Webhooks, as the library verifies it). */
export async function signedBy(record: Received, secret: string): Promise<boolean> {
  const parsed = parseWebhookSecret(secret);
  if (!parsed.ok) throw new Error(`not a secret: ${parsed.reason}`);
  const verdict = await verifyWebhook({ secrets: [parsed.key], headers: new Headers(record.headers), body: record.body });
  return verdict.ok;
}

/** Waits until `check` holds, polling; fails after `timeoutMs`. No timing is asserted. */
export async function until(check: () => Promise<boolean>, timeoutMs = 8_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('the condition did not hold in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
