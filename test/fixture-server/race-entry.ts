/**
 * The fixture server with every SSE answer stamped with its place in the object's order of
 * attachments (test/support/attach-order.ts): what scripts/faults/race.mjs runs under `wrangler dev`.
 */
import { stampAttachOrder } from '../support/attach-order.ts';

stampAttachOrder();

export * from './index.ts';
export { default } from './index.ts';
