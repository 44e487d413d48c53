/**
 * Fixtures for the `tasks-*` scenarios of `@modelcontextprotocol/conformance` 0.2.0-alpha.12
 * (the Tasks extension, SEP-2663). Names, arguments and answers are the ones the scenarios
 * send and check. Each becomes a task through `runTask`; `greet` never does.
 */
import { acceptedContent, inputRequired, ProtocolError, type McpServer, type ServerContext } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { emitTaskEvent, runTask } from '../../src/lib.ts';

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

const sleep = (ms: number, signal: AbortSignal) => scheduler.wait(ms, { signal });

const CONFIRM_SCHEMA = { type: 'object' as const, properties: { confirm: { type: 'boolean' as const } }, required: ['confirm'] };
const NAME_SCHEMA = { type: 'object' as const, properties: { name: { type: 'string' as const } }, required: ['name'] };

/** Aborted signals slow_compute saw, in this isolate (the tests' Worker and objects share it). */
let abortsSeen = 0;

export function registerTaskFixtures(server: McpServer): void {
  server.registerTool('aborts_seen', { description: 'How many of its cancellations slow_compute has seen (tests)' }, () =>
    text(String(abortsSeen)),
  );

  server.registerTool(
    'greet',
    { description: 'Greets by name, at once (never a task)', inputSchema: z.object({ name: z.string() }) },
    ({ name }) => text(`Hello, ${name}!`),
  );

  server.registerTool(
    'slow_compute',
    {
      description: 'Works for `seconds`, then reports its label: a task where the client takes one',
      inputSchema: z.object({ seconds: z.number().int().min(0).max(3600), label: z.string() }),
    },
    ({ seconds, label }, ctx: ServerContext) =>
      runTask(async () => {
        ctx.mcpReq.signal.addEventListener(
          'abort',
          () => {
            abortsSeen++;
          },
          { once: true },
        );
        for (let second = 1; second <= seconds; second++) {
          await sleep(1000, ctx.mcpReq.signal);
          await progress(ctx, second, seconds, `${second} of ${seconds} seconds`);
        }
        return text(`Computed ${label} in ${seconds} s`);
      }),
  );

  // Task event streams (SEP-2694): per step a progress notification, a log line and an event of
  // its own; with `ask`, a question after `ask` steps (the task then waits in input_required).
  server.registerTool(
    'chatter',
    {
      description: 'Per step: progress, a log line and a com.example.step event; optionally asks after `ask` steps',
      inputSchema: z.object({
        steps: z.number().int().min(0).max(100_000),
        interval_ms: z.number().int().min(0).max(60_000),
        ask: z.number().int().min(0).optional(),
        payload_chars: z.number().int().min(0).max(2_000_000).optional(),
        /** What the payload repeats (default `x`): a non-ASCII one makes its UTF-8 longer than its length. */
        payload_char: z.string().min(1).max(2).optional(),
      }),
    },
    ({ steps, interval_ms, ask, payload_chars, payload_char = 'x' }, ctx: ServerContext) =>
      runTask(async () => {
        const answer = acceptedContent<{ confirm?: unknown }>(ctx.mcpReq.inputResponses, 'go_on');
        const first = answer === undefined ? 1 : (ask ?? 0) + 1;
        for (let step = first; step <= steps; step++) {
          if (interval_ms > 0) await sleep(interval_ms, ctx.mcpReq.signal);
          await progress(ctx, step, steps, `step ${step} of ${steps}`);
          await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', data: `log ${step}` } });
          await emitTaskEvent(ctx, 'com.example.step', {
            step,
            ...(payload_chars !== undefined && { blob: payload_char.repeat(payload_chars) }),
          });
          if (answer === undefined && ask === step) {
            return inputRequired({
              inputRequests: { go_on: inputRequired.elicit({ message: `Go on after step ${step}?`, requestedSchema: CONFIRM_SCHEMA }) },
            });
          }
        }
        return text(`chattered ${steps} steps`);
      }),
  );

  server.registerTool('failing_job', { description: 'Runs only as a task, and ends with a tool error' }, (ctx: ServerContext) =>
    runTask(
      async () => {
        await sleep(200, ctx.mcpReq.signal);
        return { ...text('The job failed: the input was rejected'), isError: true };
      },
      { required: true },
    ),
  );

  server.registerTool('protocol_error_job', { description: 'Runs as a task and fails with a JSON-RPC error' }, () =>
    runTask(async () => {
      throw new ProtocolError(-32603, 'The job hit an internal error');
    }),
  );

  server.registerTool(
    'confirm_delete',
    { description: 'Asks for confirmation (inside its task), then deletes', inputSchema: z.object({ filename: z.string() }) },
    ({ filename }, ctx: ServerContext) =>
      runTask(async () => {
        const answer = acceptedContent<{ confirm?: unknown }>(ctx.mcpReq.inputResponses, 'confirm_delete');
        if (answer === undefined) {
          return inputRequired({
            inputRequests: { confirm_delete: inputRequired.elicit({ message: `Delete ${filename}?`, requestedSchema: CONFIRM_SCHEMA }) },
          });
        }
        return text(answer.confirm === true ? `Deleted ${filename}` : `Kept ${filename}`);
      }),
  );

  server.registerTool('multi_input', { description: 'Asks two questions at once (inside its task)' }, (ctx: ServerContext) =>
    runTask(async () => {
      const first = acceptedContent<{ name?: unknown }>(ctx.mcpReq.inputResponses, 'first');
      const second = acceptedContent<{ name?: unknown }>(ctx.mcpReq.inputResponses, 'second');
      if (first === undefined || second === undefined) {
        const ask = (message: string) => inputRequired.elicit({ message, requestedSchema: NAME_SCHEMA });
        return inputRequired({ inputRequests: { first: ask('First name?'), second: ask('Second name?') } });
      }
      return text(`Got ${String(first.name)} and ${String(second.name)}`);
    }),
  );

  // MRTR, then a task: the question is asked and answered synchronously ("servers SHOULD
  // resolve all MRTR exchanges ... before responding with a CreateTaskResult").
  server.registerTool('test_tool_with_task', { description: 'Asks for a name, then greets it as a task' }, (ctx: ServerContext) => {
    const name = answeredName(ctx);
    if (typeof name !== 'string') return name;
    return runTask(async () => text(`Hello, ${name}!`), { required: true });
  });

  // Both: a question before the task, and one inside it. Every later round of the task runs
  // the code before runTask again, which must still find its answer.
  server.registerTool('greet_then_confirm', { description: 'Asks for a name, then (as a task) for a go-ahead' }, (ctx: ServerContext) => {
    const name = answeredName(ctx);
    if (typeof name !== 'string') return name;
    return runTask(async () => {
      const go = acceptedContent<{ confirm?: unknown }>(ctx.mcpReq.inputResponses, 'go_ahead');
      if (go === undefined) {
        return inputRequired({
          inputRequests: { go_ahead: inputRequired.elicit({ message: `Greet ${name}?`, requestedSchema: CONFIRM_SCHEMA }) },
        });
      }
      return text(go.confirm === true ? `Hello, ${name}!` : `Not greeting ${name}`);
    });
  });
}

/** The name answered under `user_name` (MRTR, before any task), or the question that asks for it. */
function answeredName(ctx: ServerContext): string | ReturnType<typeof inputRequired> {
  const answer = acceptedContent<{ name?: unknown }>(ctx.mcpReq.inputResponses, 'user_name');
  if (typeof answer?.name === 'string') return answer.name;
  return inputRequired({
    inputRequests: { user_name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: NAME_SCHEMA }) },
  });
}

async function progress(ctx: ServerContext, done: number, total: number, message: string): Promise<void> {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  if (progressToken !== undefined) {
    await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress: done, total, message } });
  }
}
