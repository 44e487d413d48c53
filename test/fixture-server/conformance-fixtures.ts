/**
 * Fixtures for the MCP conformance suite (`@modelcontextprotocol/conformance` 0.1.16 and 0.2.0-alpha.12,
 * `conformance server --suite all`): every tool, resource, resource template, prompt,
 * completion and subscription handler its server scenarios exercise, with the exact
 * names, arguments and payloads the scenarios check.
 *
 * Register the fixtures before the server connects to a transport (registering a first
 * tool, resource or prompt updates capabilities, which McpServer refuses once connected),
 * and construct the McpServer with `conformanceCapabilities`:
 *
 *   new McpServer(info, { capabilities: conformanceCapabilities })
 *
 * - `logging: {}`: without it `logging/setLevel` is not handled and `ctx.mcpReq.log`
 *   silently drops messages (scenarios logging-set-level, tools-call-with-logging).
 * - `completions: {}`: advertises `completion/complete` (completion-complete).
 *   McpServer also adds it when the completable prompt argument is registered.
 * - `resources: { subscribe: true }`: McpServer never advertises `subscribe` itself
 *   (resources-subscribe, resources-unsubscribe).
 *
 * `tools`, `resources` and `prompts` (with `listChanged: true`) are added by McpServer
 * on the first registration of each kind, so they need not be listed.
 */
import type {
  CreateMessageResult,
  CreateMessageResultWithTools,
  McpServer,
  ServerCapabilities,
  ServerContext,
} from '@modelcontextprotocol/server';
import { completable, fromJsonSchema, ResourceTemplate } from '@modelcontextprotocol/server';
import * as z from 'zod';

export const conformanceCapabilities: ServerCapabilities = {
  logging: {},
  completions: {},
  resources: { subscribe: true },
};

/** 1x1 red PNG. */
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
/** One silent sample of 16-bit mono PCM at 8 kHz; the suite insists on `audio/wav`. */
const WAV_BASE64 = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA==';

/**
 * How long `test_reconnection` keeps working after closing its SSE stream. The result is
 * produced only after the close, so it can reach the client solely through the stream the
 * suite resumes with GET + Last-Event-ID (live, or replayed from the event store).
 */
const RECONNECTION_RESULT_DELAY_MS = 300;

/** Suggestions for `test_prompt_with_arguments.arg1`, taken from the suite's example. */
const ARG1_SUGGESTIONS = ['paris', 'park', 'party'];

/**
 * SEP-1613 (scenario json-schema-2020-12): the listed inputSchema must keep `$schema`,
 * `$defs` and `additionalProperties: false` verbatim, so it is given as raw JSON Schema
 * rather than generated from zod.
 */
const JSON_SCHEMA_2020_12_INPUT = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: {
        street: { type: 'string' },
        city: { type: 'string' },
      },
    },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  // SEP-2106 (2026-07-28 scenario): composition, conditional and anchor keywords survive listing.
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's `then`, which the scenario checks for.
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
} as const;

type JsonSchema2020Args = {
  name?: string;
  address?: { street?: string; city?: string };
  contactMethod?: string;
  phone?: string;
  email?: string;
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

/** The text of a sampling response, whose content may be one block or several. */
function samplingText({ content }: CreateMessageResult | CreateMessageResultWithTools): string {
  const blocks = Array.isArray(content) ? content : [content];
  return blocks.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('\n');
}

function registerContentTools(server: McpServer): void {
  server.registerTool('test_simple_text', { description: 'Returns a simple text response' }, () =>
    text('This is a simple text response for testing.'),
  );

  server.registerTool('test_image_content', { description: 'Returns an image' }, () => ({
    content: [{ type: 'image', data: PNG_BASE64, mimeType: 'image/png' }],
  }));

  server.registerTool('test_audio_content', { description: 'Returns an audio clip' }, () => ({
    content: [{ type: 'audio', data: WAV_BASE64, mimeType: 'audio/wav' }],
  }));

  server.registerTool('test_embedded_resource', { description: 'Returns an embedded resource' }, () => ({
    content: [
      {
        type: 'resource',
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      },
    ],
  }));

  server.registerTool('test_multiple_content_types', { description: 'Returns text, image and embedded resource content' }, () => ({
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: {
          uri: 'test://mixed-content-resource',
          mimeType: 'application/json',
          text: JSON.stringify({ test: 'data', value: 123 }),
        },
      },
    ],
  }));

  server.registerTool(
    'json_schema_2020_12_tool',
    {
      description: 'Tool with JSON Schema 2020-12 features',
      inputSchema: fromJsonSchema<JsonSchema2020Args>(JSON_SCHEMA_2020_12_INPUT),
    },
    (args) => text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`),
  );
}

function registerBehaviourTools(server: McpServer): void {
  // The suite expects at least 3 info-level messages, spaced ~50 ms apart, before the result.
  server.registerTool('test_tool_with_logging', { description: 'Sends log messages while it runs' }, async (ctx: ServerContext) => {
    await ctx.mcpReq.log('info', 'Tool execution started');
    await sleep(50);
    await ctx.mcpReq.log('info', 'Tool processing data');
    await sleep(50);
    await ctx.mcpReq.log('info', 'Tool execution completed');
    return text('Tool with logging executed successfully');
  });

  // Progress 0, 50, 100 of 100, ~50 ms apart, when the caller supplied a progress token.
  server.registerTool('test_tool_with_progress', { description: 'Reports progress while it runs' }, async (ctx: ServerContext) => {
    const progressToken = ctx.mcpReq._meta?.progressToken;
    for (const progress of [0, 50, 100]) {
      if (progress > 0) await sleep(50);
      if (progressToken !== undefined) {
        await ctx.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken, progress, total: 100 },
        });
      }
    }
    return text('Tool with progress executed successfully');
  });

  // McpServer turns the thrown error into `isError: true` with the message as text content.
  server.registerTool('test_error_handling', { description: 'Always fails' }, () => {
    throw new Error('This tool intentionally returns an error for testing');
  });

  // SEP-1699 (scenario server-sse-polling): close the POST SSE stream mid-call so the
  // client must resume with GET + Last-Event-ID to receive this result.
  server.registerTool(
    'test_reconnection',
    { description: 'Closes its SSE stream mid-call; the result arrives after the client reconnects' },
    async (ctx: ServerContext) => {
      ctx.http?.closeSSE?.();
      await sleep(RECONNECTION_RESULT_DELAY_MS);
      return text('Reconnection test completed successfully');
    },
  );
}

/** Tools that call back into the client; without the client capability the SDK throws, which McpServer reports as a tool error. */
function registerClientRequestTools(server: McpServer): void {
  server.registerTool(
    'test_sampling',
    {
      description: 'Asks the client to sample an LLM',
      inputSchema: z.object({ prompt: z.string().describe('The prompt to send to the LLM') }),
    },
    async ({ prompt }, ctx) => {
      const result = await ctx.mcpReq.requestSampling({
        messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
        maxTokens: 100,
      });
      return text(`LLM response: ${samplingText(result)}`);
    },
  );

  server.registerTool(
    'test_elicitation',
    {
      description: 'Asks the user for input',
      inputSchema: z.object({ message: z.string().describe('The message to show the user') }),
    },
    async ({ message }, ctx) => {
      const result = await ctx.mcpReq.elicitInput({
        message,
        requestedSchema: {
          type: 'object',
          properties: {
            username: { type: 'string', description: "User's response" },
            email: { type: 'string', description: "User's email address" },
          },
          required: ['username', 'email'],
        },
      });
      return text(`User response: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`);
    },
  );

  // SEP-1034: a default for every primitive type, with these exact values.
  server.registerTool(
    'test_elicitation_sep1034_defaults',
    { description: 'Asks for input with a default for every primitive type (SEP-1034)' },
    async (ctx: ServerContext) => {
      const result = await ctx.mcpReq.elicitInput({
        message: 'Please review and update the form fields with defaults',
        requestedSchema: {
          type: 'object',
          properties: {
            name: { type: 'string', description: 'User name', default: 'John Doe' },
            age: { type: 'integer', description: 'User age', default: 30 },
            score: { type: 'number', description: 'User score', default: 95.5 },
            status: {
              type: 'string',
              description: 'User status',
              enum: ['active', 'inactive', 'pending'],
              default: 'active',
            },
            verified: { type: 'boolean', description: 'Verification status', default: true },
          },
          required: [],
        },
      });
      return text(`Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`);
    },
  );

  // SEP-1330: the five enum shapes, under the property names the suite inspects.
  server.registerTool(
    'test_elicitation_sep1330_enums',
    { description: 'Asks for input using every enum schema variant (SEP-1330)' },
    async (ctx: ServerContext) => {
      const result = await ctx.mcpReq.elicitInput({
        message: 'Please select options from the enum fields',
        requestedSchema: {
          type: 'object',
          properties: {
            untitledSingle: {
              type: 'string',
              description: 'Select one option',
              enum: ['option1', 'option2', 'option3'],
            },
            titledSingle: {
              type: 'string',
              description: 'Select one option with titles',
              oneOf: [
                { const: 'value1', title: 'First Option' },
                { const: 'value2', title: 'Second Option' },
                { const: 'value3', title: 'Third Option' },
              ],
            },
            legacyEnum: {
              type: 'string',
              description: 'Select one option (legacy)',
              enum: ['opt1', 'opt2', 'opt3'],
              enumNames: ['Option One', 'Option Two', 'Option Three'],
            },
            untitledMulti: {
              type: 'array',
              description: 'Select multiple options',
              items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
            },
            titledMulti: {
              type: 'array',
              description: 'Select multiple options with titles',
              items: {
                anyOf: [
                  { const: 'value1', title: 'First Choice' },
                  { const: 'value2', title: 'Second Choice' },
                  { const: 'value3', title: 'Third Choice' },
                ],
              },
            },
          },
          required: [],
        },
      });
      return text(`Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`);
    },
  );
}

function registerResources(server: McpServer): void {
  server.registerResource(
    'static-text',
    'test://static-text',
    { description: 'A static text resource', mimeType: 'text/plain' },
    (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }],
    }),
  );

  server.registerResource(
    'static-binary',
    'test://static-binary',
    { description: 'A static binary resource (PNG image)', mimeType: 'image/png' },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: 'image/png', blob: PNG_BASE64 }] }),
  );

  server.registerResource(
    'watched-resource',
    'test://watched-resource',
    { description: 'The resource the suite subscribes to', mimeType: 'text/plain' },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Watched resource content' }] }),
  );

  server.registerResource(
    'template',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { description: 'A resource template with parameter substitution', mimeType: 'application/json' },
    (uri, { id }) => ({
      contents: [
        {
          uri: uri.href,
          mimeType: 'application/json',
          text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${String(id)}` }),
        },
      ],
    }),
  );

  // McpServer has no subscription API. The fixtures never change, so no
  // notifications/resources/updated is ever due; acknowledging is all there is to do.
  server.server.setRequestHandler('resources/subscribe', () => ({}));
  server.server.setRequestHandler('resources/unsubscribe', () => ({}));
}

function registerPrompts(server: McpServer): void {
  server.registerPrompt('test_simple_prompt', { description: 'A simple prompt without arguments' }, () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
  }));

  // arg1 is completable: the completion-complete scenario completes it.
  server.registerPrompt(
    'test_prompt_with_arguments',
    {
      description: 'A prompt with required arguments',
      argsSchema: z.object({
        arg1: completable(z.string().describe('First test argument'), (value) =>
          ARG1_SUGGESTIONS.filter((suggestion) => suggestion.startsWith(value.toLowerCase())),
        ),
        arg2: z.string().describe('Second test argument'),
      }),
    },
    ({ arg1, arg2 }) => ({
      messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }],
    }),
  );

  server.registerPrompt(
    'test_prompt_with_embedded_resource',
    {
      description: 'A prompt that embeds a resource',
      argsSchema: z.object({ resourceUri: z.string().describe('URI of the resource to embed') }),
    },
    ({ resourceUri }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
          },
        },
        { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
      ],
    }),
  );

  server.registerPrompt('test_prompt_with_image', { description: 'A prompt that includes an image' }, () => ({
    messages: [
      { role: 'user', content: { type: 'image', data: PNG_BASE64, mimeType: 'image/png' } },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ],
  }));
}

/** Registers everything `conformance server --suite all` expects of the server under test. */
export function registerConformanceFixtures(server: McpServer): void {
  registerContentTools(server);
  registerBehaviourTools(server);
  registerClientRequestTools(server);
  registerResources(server);
  registerPrompts(server);
}
