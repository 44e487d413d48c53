/**
 * A tool that throws (tools/tool-errors.ts): the client gets what the SDK sends — an `isError`
 * result with the error's message, nothing more — and the log gets one `mcp.tool.error` line on
 * the error stream, with the tool's name, the error and its stack. In a session, on the
 * 2026-07-28 path, and in a task's round. A tool that throws nothing logs nothing. The
 * Worker, its objects and this test share one isolate, so console spies see all.
 */
import { describe, expect, it } from 'vitest';
import { messages, openSession } from '../support/mcp-http.ts';
import { answerOf, modernRequest } from '../support/modern-http.ts';
import { createTask, waitForStatus } from '../support/task-http.ts';
import { captureLogLines } from '../support/log-lines.ts';

const MESSAGE = 'This tool intentionally returns an error for testing';

const lines = captureLogLines();

const toolErrors = () => lines().filter(({ line }) => line.msg === 'mcp.tool.error');

describe('a tool that throws', () => {
  it('in a session: isError with the message only, and one log line with the stack', async () => {
    const session = await openSession();
    const [answer] = messages(await session.call('tools/call', { name: 'test_error_handling', arguments: {} }));
    expect(answer).toMatchObject({ result: { isError: true, content: [{ type: 'text', text: MESSAGE }] } });
    expect(JSON.stringify(answer)).not.toContain('conformance-fixtures');
    expect(toolErrors()).toEqual([
      {
        stream: 'err',
        line: {
          msg: 'mcp.tool.error',
          tool: 'test_error_handling',
          error: `Error: ${MESSAGE}`,
          stack: expect.stringMatching(/^Error: This tool intentionally returns an error for testing\n\s+at .*conformance-fixtures\.ts/),
        },
      },
    ]);
    await session.delete();
  });

  it('on the 2026-07-28 path: the same', async () => {
    const answer = await answerOf(await modernRequest('tools/call', { name: 'test_error_handling', arguments: {} }));
    expect(answer.result).toMatchObject({ isError: true, content: [{ type: 'text', text: MESSAGE }] });
    expect(toolErrors()).toHaveLength(1);
    expect(toolErrors()[0]!.line).toMatchObject({ tool: 'test_error_handling', stack: expect.stringContaining('conformance-fixtures.ts') });
  });

  it("in a task's round: logged where the task runs", async () => {
    const taskId = await createTask('protocol_error_job', {});
    await waitForStatus(taskId, 'failed');
    expect(toolErrors().map(({ line }) => [line.tool, line.error])).toEqual([
      ['protocol_error_job', expect.stringContaining('The job hit an internal error')],
    ]);
  });

  it('tools that throw nothing: no line', async () => {
    const answer = await answerOf(await modernRequest('tools/call', { name: 'greet', arguments: { name: 'x' } }));
    expect(answer.result.isError).toBeUndefined();
    const session = await openSession();
    await session.call('tools/call', { name: 'test_simple_text', arguments: {} });
    await session.delete();
    expect(toolErrors()).toEqual([]);
  });
});
