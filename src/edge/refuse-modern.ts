/**
 * The answer to a 2026-07-28 request when the Worker serves no `modern` factory.
 */
import { errorResponse, McpHttpError } from '../core/errors.ts';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../core/protocol-version.ts';
import { readBoundedText } from '../core/request-checks.ts';
import { HEADERS, JsonRpcCode } from '../core/wire.ts';

/**
 * A modern request to a Worker that serves no modern factory: "-32022 with data.supported" is
 * the one answer clients read as "use another revision", and the revisions named are the
 * sessionful ones, so they open a session.
 */
export async function refuseModern(request: Request, maxBodyBytes: number): Promise<Response> {
  let id: string | number | null = null;
  let requested: unknown = request.headers.get(HEADERS.protocolVersion);
  const body = await readBoundedText(request, maxBodyBytes); // over the bound: 413
  try {
    const message = JSON.parse(body) as { id?: unknown; params?: { _meta?: Record<string, unknown> } };
    if (typeof message.id === 'string' || typeof message.id === 'number') id = message.id;
    requested = message.params?._meta?.['io.modelcontextprotocol/protocolVersion'] ?? requested;
  } catch {
    // Unreadable: the refusal still names what is served.
  }
  const error = new McpHttpError(
    400,
    JsonRpcCode.UnsupportedProtocolVersion,
    `Unsupported protocol version: this server serves ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`,
    { supported: [...SUPPORTED_PROTOCOL_VERSIONS], requested },
    id,
  );
  return errorResponse(error);
}
