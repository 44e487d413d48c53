/**
 * An `initialize` request's params, checked with the SDK's own schema before any session object
 * is woken. JSON-RPC 2.0 answers wrong params with -32602 Invalid params; handed to the SDK, they
 * would come back as -32603 Internal error with its validator's whole issue list as the message.
 * A protocol version the server does not know is not an error here: the server answers with one
 * it supports ("If the server supports the requested protocol version, it MUST respond with the
 * same version. Otherwise, the server MUST respond with another protocol version it supports").
 */
import { specTypeSchemas } from '@modelcontextprotocol/server';
import { httpErrors } from '../core/errors.ts';
import type { JsonRpcRequest } from '../core/jsonrpc.ts';

/** At most this many problems are named; a client fixes the first ones first. */
const MAX_PROBLEMS = 3;

export async function checkHandshakeParams(request: JsonRpcRequest): Promise<void> {
  const checked = await specTypeSchemas.InitializeRequestParams['~standard'].validate(request.params);
  if (checked.issues === undefined) return;
  const problems = checked.issues.slice(0, MAX_PROBLEMS).map(({ path = [], message }) => {
    const at = ['params', ...path.map((segment) => (typeof segment === 'object' ? segment.key : segment))].join('.');
    return `${at}: ${message}`;
  });
  throw httpErrors.invalidParams(`initialize ${problems.join('; ')}`, request.id);
}
