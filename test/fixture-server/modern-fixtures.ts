/**
 * Fixtures for the 2026-07-28 scenarios of `@modelcontextprotocol/conformance` 0.2.0-alpha.12
 * (`--requirements 2026-07-28`), registered only on the fixture's `modern` servers: multi-round
 * trip tools (SEP-2322) built with the SDK's `inputRequired`, the diagnostic tools of
 * server-stateless (SEP-2575) and a tool with an `x-mcp-header` parameter (SEP-2243). Names,
 * messages and keys are the ones the scenarios send and check.
 *
 * Every tool is "write once": it looks at what the client answered (`inputResponses`) and at
 * its verified `requestState`, asks again for whatever is missing, and completes otherwise.
 */
import {
  acceptedContent,
  CLIENT_CAPABILITIES_META_KEY,
  fromJsonSchema,
  inputRequired,
  inputResponse,
  type InputRequests,
  type McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { ModernContext, RequestStateSeal } from '../../src/lib.ts';

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

const NAME_SCHEMA = { type: 'object' as const, properties: { name: { type: 'string' as const } }, required: ['name'] };
const askName = (message = 'What is your name?') => inputRequired.elicit({ message, requestedSchema: NAME_SCHEMA });
const askConfirm = () =>
  inputRequired.elicit({
    message: 'Please confirm',
    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
  });
const askSampling = (question: string, maxTokens: number) =>
  inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: question } }], maxTokens });

const REGION_SCHEMA = {
  type: 'object',
  properties: { region: { type: 'string', description: 'A region name', 'x-mcp-header': 'Region' } },
};

/** The state a tool carries between rounds. Signed, not encrypted: nothing secret goes in it. */
interface RoundState {
  readonly round: number;
  readonly name?: string;
}

function roundState(ctx: ServerContext): RoundState | undefined {
  return ctx.mcpReq.requestState<RoundState>();
}

export function registerModernConformanceFixtures(server: McpServer, { requestState, notify }: ModernContext): void {
  registerInputRequiredTools(server, requestState);
  registerStatelessDiagnostics(server);
  // A change made by this request reaches listen streams held by any other (event-bus.ts).
  server.registerTool('test_trigger_tool_change', { description: 'Announces a tool list change to listeners' }, () => {
    notify.toolsChanged();
    return text('tools changed');
  });
  server.registerTool('test_trigger_prompt_change', { description: 'Announces a prompt list change to listeners' }, () => {
    notify.promptsChanged();
    return text('prompts changed');
  });
  server.registerTool(
    'test_x_mcp_header',
    {
      description: 'Echoes its region, which travels in the Mcp-Param-Region header too (SEP-2243)',
      // Raw JSON Schema: `x-mcp-header` is an extension keyword the schema types do not know.
      inputSchema: fromJsonSchema<{ region?: string }>(REGION_SCHEMA as Parameters<typeof fromJsonSchema>[0]),
    },
    ({ region }) => text(`region: ${region ?? '(none)'}`),
  );
}

function registerInputRequiredTools(server: McpServer, seal: RequestStateSeal): void {
  server.registerTool(
    'test_input_required_result_elicitation',
    { description: 'Asks the client for a name (MRTR)' },
    (ctx: ServerContext) => {
      const answer = acceptedContent<{ name?: unknown }>(ctx.mcpReq.inputResponses, 'user_name');
      if (typeof answer?.name !== 'string') return inputRequired({ inputRequests: { user_name: askName() } });
      return text(`Hello, ${answer.name}!`);
    },
  );

  server.registerTool('test_input_required_result_sampling', { description: 'Asks the client to sample (MRTR)' }, (ctx: ServerContext) => {
    const answer = inputResponse(ctx.mcpReq.inputResponses, 'capital_question');
    if (answer.kind !== 'sampling') {
      return inputRequired({ inputRequests: { capital_question: askSampling('What is the capital of France?', 100) } });
    }
    return text(`The model said: ${JSON.stringify(answer.result.content)}`);
  });

  server.registerTool(
    'test_input_required_result_list_roots',
    { description: 'Asks the client for its roots (MRTR)' },
    (ctx: ServerContext) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'client_roots');
      if (answer.kind !== 'roots') return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
      return text(`Roots: ${answer.roots.map((root) => root.uri).join(', ') || '(none)'}`);
    },
  );

  server.registerTool(
    'test_input_required_result_request_state',
    { description: 'Carries verified state between rounds (MRTR)' },
    async (ctx: ServerContext) => {
      const confirmed = acceptedContent<{ ok?: unknown }>(ctx.mcpReq.inputResponses, 'confirm');
      if (roundState(ctx)?.round === 1 && confirmed?.ok === true) return text('state-ok');
      return inputRequired({ inputRequests: { confirm: askConfirm() }, requestState: await seal.mint({ round: 1 }, ctx) });
    },
  );

  server.registerTool(
    'test_input_required_result_tampered_state',
    { description: 'Refuses state it did not sign (MRTR)' },
    async (ctx: ServerContext) => {
      // The SDK verifies the echoed state before this runs: a tampered one never gets here.
      if (roundState(ctx)?.round === 1) return text('state verified');
      return inputRequired({ inputRequests: { confirm: askConfirm() }, requestState: await seal.mint({ round: 1 }, ctx) });
    },
  );

  server.registerTool(
    'test_input_required_result_multiple_inputs',
    { description: 'Asks for three things at once (MRTR)' },
    async (ctx: ServerContext) => {
      const responses = ctx.mcpReq.inputResponses;
      const name = acceptedContent<{ name?: unknown }>(responses, 'user_name');
      const greeting = inputResponse(responses, 'greeting');
      const roots = inputResponse(responses, 'client_roots');
      if (typeof name?.name === 'string' && greeting.kind === 'sampling' && roots.kind === 'roots') {
        return text(`${name.name}, ${roots.roots.length} root(s), greeting ${JSON.stringify(greeting.result.content)}`);
      }
      const inputRequests: InputRequests = {};
      if (typeof name?.name !== 'string') inputRequests.user_name = askName();
      if (greeting.kind !== 'sampling') inputRequests.greeting = askSampling('Generate a greeting', 50);
      if (roots.kind !== 'roots') inputRequests.client_roots = inputRequired.listRoots();
      return inputRequired({ inputRequests, requestState: await seal.mint({ round: 1 }, ctx) });
    },
  );

  server.registerTool(
    'test_input_required_result_multi_round',
    { description: 'Asks twice, one round each (MRTR)' },
    async (ctx: ServerContext) => {
      const state = roundState(ctx);
      const responses = ctx.mcpReq.inputResponses;
      if (state?.round === 2 && state.name !== undefined) {
        const color = acceptedContent<{ color?: unknown }>(responses, 'step2');
        if (typeof color?.color === 'string') return text(`${state.name} likes ${color.color}`);
      }
      const name = state?.round === 1 ? acceptedContent<{ name?: unknown }>(responses, 'step1') : undefined;
      if (typeof name?.name === 'string' || (state?.round === 2 && state.name !== undefined)) {
        const known = typeof name?.name === 'string' ? name.name : state!.name!;
        return inputRequired({
          inputRequests: {
            step2: inputRequired.elicit({
              message: 'Step 2: What is your favorite color?',
              requestedSchema: { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] },
            }),
          },
          requestState: await seal.mint({ round: 2, name: known }, ctx),
        });
      }
      return inputRequired({
        inputRequests: { step1: askName('Step 1: What is your name?') },
        requestState: await seal.mint({ round: 1 }, ctx),
      });
    },
  );

  server.registerTool(
    'test_input_required_result_capabilities',
    { description: 'Asks only for what the client declared it can answer (MRTR)' },
    (ctx: ServerContext) => {
      const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
      const declared = (envelope[CLIENT_CAPABILITIES_META_KEY] ?? {}) as Record<string, unknown>;
      const inputRequests: InputRequests = {};
      if (declared.elicitation !== undefined) inputRequests.user_name = askName();
      if (declared.sampling !== undefined) inputRequests.question = askSampling('What is the capital of France?', 100);
      if (declared.roots !== undefined) inputRequests.client_roots = inputRequired.listRoots();
      if (Object.keys(inputRequests).length === 0) return text('the client declared nothing to ask');
      if (Object.keys(ctx.mcpReq.inputResponses ?? {}).length > 0) return text('answered');
      return inputRequired({ inputRequests });
    },
  );

  server.registerPrompt(
    'test_input_required_result_prompt',
    { description: 'A prompt that asks the client for context first (MRTR)' },
    (ctx: ServerContext) => {
      const answer = acceptedContent<{ context?: unknown }>(ctx.mcpReq.inputResponses, 'user_context');
      if (typeof answer?.context !== 'string') {
        return inputRequired({
          inputRequests: {
            user_context: inputRequired.elicit({
              message: 'What context should the prompt use?',
              requestedSchema: { type: 'object', properties: { context: { type: 'string' } }, required: ['context'] },
            }),
          },
        });
      }
      return { messages: [{ role: 'user' as const, content: { type: 'text' as const, text: `Context: ${answer.context}` } }] };
    },
  );
}

function registerStatelessDiagnostics(server: McpServer): void {
  // A sampling round for a client that declared no sampling: the SDK answers -32021.
  server.registerTool('test_missing_capability', { description: 'Needs the sampling capability (SEP-2575)' }, (ctx: ServerContext) => {
    if (inputResponse(ctx.mcpReq.inputResponses, 'needs_sampling').kind === 'sampling') return text('sampled');
    return inputRequired({ inputRequests: { needs_sampling: askSampling('Say anything', 10) } });
  });
  // Must not send a server→client request on its response stream: it just answers.
  server.registerTool('test_streaming_elicitation', { description: 'Answers without asking anything (SEP-2575)' }, () =>
    text('no elicitation on a 2026-07-28 response stream'),
  );
  // Logs only if the request asked for a level (`_meta` logLevel): the SDK drops it otherwise.
  server.registerTool(
    'test_logging_tool',
    { description: 'Logs, if the request set a log level (SEP-2575)' },
    async (ctx: ServerContext) => {
      await ctx.mcpReq.log('info', 'test_logging_tool ran');
      return text('logged if asked');
    },
  );
}
