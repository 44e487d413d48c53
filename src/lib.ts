/**
 * The deployed entry point: the edge Worker and the demo's session object.
 * Library code lives in core/ and session/; the demo (your tools go there) in demo/.
 */
import { DemoSession } from './demo/demo-session.ts';
import { createMcpWorker } from './worker.ts';

export { DemoSession };

export default createMcpWorker<Env>({ sessions: (env) => env.MCP_SESSION }) satisfies ExportedHandler<Env>;
