/**
 * Deployment configuration, read from wrangler `[vars]`. Every knob has a default, so an
 * empty environment is a valid (loopback-only) configuration.
 */
import { parseHostAllowlist, parseOriginAllowlist, type Allowlist } from './core/allowlist.ts';

export type ResponseMode = 'sse' | 'json';

export interface TransportConfig {
  /** Host header values accepted (DNS-rebinding defence). */
  readonly allowedHosts: Allowlist;
  /** Origin header values accepted; also the origins granted CORS. */
  readonly allowedOrigins: Allowlist;
  /** How a POST carrying requests is answered: an SSE stream, or one JSON body. */
  readonly responseMode: ResponseMode;
  /** Interval of SSE comment heartbeats on open connections; 0 disables them. */
  readonly heartbeatMs: number;
  /** The `retry:` sent with every priming event: how long clients wait before reconnecting. */
  readonly retryMs: number;
  readonly maxBodyBytes: number;
}

export interface ConfigVars {
  readonly ALLOWED_HOSTS?: string;
  readonly ALLOWED_ORIGINS?: string;
  readonly RESPONSE_MODE?: string;
  readonly HEARTBEAT_MS?: string;
  readonly RETRY_MS?: string;
}

export const DEFAULT_ALLOWED_HOSTS = 'localhost,127.0.0.1,[::1]';
export const DEFAULT_ALLOWED_ORIGINS = 'http://localhost,http://127.0.0.1,http://[::1]';
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

function nonNegativeInteger(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined || text.trim() === '') return fallback;
  const value = /^[0-9]+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!Number.isSafeInteger(value)) {
    throw new Error(`configuration: ${name} must be a non-negative integer, got ${JSON.stringify(text)}`);
  }
  return value;
}

export function readConfig(vars: ConfigVars): TransportConfig {
  const mode = (vars.RESPONSE_MODE ?? 'sse').trim();
  if (mode !== 'sse' && mode !== 'json') {
    throw new Error(`configuration: RESPONSE_MODE must be "sse" or "json", got ${JSON.stringify(mode)}`);
  }
  return {
    allowedHosts: parseHostAllowlist(vars.ALLOWED_HOSTS ?? DEFAULT_ALLOWED_HOSTS),
    allowedOrigins: parseOriginAllowlist(vars.ALLOWED_ORIGINS ?? DEFAULT_ALLOWED_ORIGINS),
    responseMode: mode,
    heartbeatMs: nonNegativeInteger('HEARTBEAT_MS', vars.HEARTBEAT_MS, 15_000),
    retryMs: nonNegativeInteger('RETRY_MS', vars.RETRY_MS, 1_000),
    maxBodyBytes: MAX_BODY_BYTES,
  };
}
