/**
 * An event type, declared once by the server's author beside the tools (MCP Events, SEP-3415;
 * docs/events.md): its name and description, the Standard Schemas (zod, as `registerTool`
 * takes) of its subscription arguments and of its payload, the delivery modes it offers, and
 * how arguments select occurrences. `events/list` lists what this holds; `events/poll` and
 * `events/stream` check arguments against it; `emit` checks a payload against it before the
 * occurrence is stored (event-emit.ts).
 *
 * What an author may leave out has the answer a user would expect: no `matches` delivers every
 * occurrence to every subscription; no `authorize` lets every caller the Worker let in subscribe
 * ("When the caller is authenticated, the server MUST verify that the principal has permission"
 * — the Worker's authentication is that check unless the type narrows it); retention defaults to
 * DEFAULT_RETENTION.
 */
import type { StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import type { Principal } from '../auth/principal.ts';
import {
  DELIVERY_MODES,
  type DeliveryMode,
  type EventTypeDescriptor,
  type JsonObject,
  MAX_EVENT_NAME_LENGTH,
} from '../core/events-wire.ts';
import { utf8Length } from '../core/utf8.ts';
import { placedNamespace } from '../edge/placement.ts';
import type { Appended } from './event-log-store.ts';
import { eventLog, type EventLogNamespace } from './event-logs.ts';
import { type Retention, retentionOf } from './event-retention.ts';

export interface EventTypeDefinition<Args extends JsonObject, Data extends JsonObject> {
  /** Unique among the server's types; SEP-3415 suggests a dotted namespace (`github.push`). */
  readonly name: string;
  readonly description?: string;
  /** The subscription arguments (`arguments` of poll and stream): checked before anything is read. */
  readonly inputSchema: StandardSchemaWithJSON<Args, Args>;
  /** Each occurrence's `data`: checked by `emit` before it is stored. */
  readonly payloadSchema: StandardSchemaWithJSON<Data, Data>;
  /** "any non-empty subset of "poll", "push" and "webhook"". */
  readonly delivery: readonly DeliveryMode[];
  /** Whether a subscription with `args` receives an occurrence with `data`. Absent: every subscription receives every occurrence. */
  readonly matches?: (args: Args, data: Data) => boolean;
  /** Whether `principal` may subscribe with `args` (Forbidden otherwise). Absent: whoever the Worker let in may. */
  readonly authorize?: (principal: Principal, args: Args) => boolean;
  readonly retention?: Partial<Retention>;
  /**
   * One log per partition instead of one for the type, to lift the write ceiling of one object
   * (docs/events.md, *Limits*): `ofData` names an occurrence's partition, `ofArguments` the one
   * partition a subscription reads. Occurrences are ordered within a partition only.
   */
  readonly partitions?: {
    readonly ofData: (data: Data) => string;
    readonly ofArguments: (args: Args) => string;
  };
}

/** What an author emits: the payload, and the upstream's stable id and time where it has them. */
export interface Emission<Data extends JsonObject> {
  readonly data: Data;
  /**
   * "When the upstream source provides a stable event identifier …, the server SHOULD use that
   * value as eventId": given, an occurrence whose id is still kept is not stored again (emit
   * answers the kept one, `duplicate: true`). Absent, one is generated.
   */
  readonly eventId?: string;
  /** ISO 8601, when it occurred; absent, when it was stored. */
  readonly timestamp?: string;
}

/** The largest payload an occurrence may carry, as stored (UTF-8 JSON). SEP-3415: "Servers SHOULD keep event payloads minimal." */
export const MAX_EVENT_DATA_BYTES = 64 * 1024;
/** The longest author's eventId kept. */
export const MAX_EVENT_ID_LENGTH = 256;

/** An emit the author's code got wrong: a payload its schema refuses, an id or time malformed, a payload too large. */
export class EventEmitError extends TypeError {
  override readonly name = 'EventEmitError';
}

/** A payload or arguments checked against their schema: the schema's output, or its issues as the schema library worded them. */
export type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly invalid: string };

export class EventType<Args extends JsonObject = JsonObject, Data extends JsonObject = JsonObject> {
  readonly name: string;
  readonly delivery: readonly DeliveryMode[];
  readonly retention: Retention;
  /**
   * Erased to plain objects: the Worker serves types of every shape through one list
   * (`EventType[]`), and what reaches these functions passed the type's own schemas first.
   */
  readonly #definition: EventTypeDefinition<JsonObject, JsonObject>;
  #descriptor: EventTypeDescriptor | undefined;

  constructor(definition: EventTypeDefinition<Args, Data>) {
    const { name, delivery } = definition;
    if (typeof name !== 'string' || name.length === 0 || name.length > MAX_EVENT_NAME_LENGTH || !/^[\x21-\x7e]+$/.test(name)) {
      throw new TypeError(`an event type's name is 1 to ${MAX_EVENT_NAME_LENGTH} printable ASCII characters, got ${JSON.stringify(name)}`);
    }
    if (delivery.length === 0 || new Set(delivery).size !== delivery.length || !delivery.every((mode) => DELIVERY_MODES.includes(mode))) {
      throw new TypeError(`event type ${name}: delivery is a non-empty set of ${DELIVERY_MODES.join(', ')}`);
    }
    this.name = name;
    this.delivery = [...delivery];
    this.retention = retentionOf(name, definition.retention);
    this.#definition = definition as unknown as EventTypeDefinition<JsonObject, JsonObject>;
  }

  /** This type as `events/list` shows it; the schemas converted once. */
  get descriptor(): EventTypeDescriptor {
    this.#descriptor ??= {
      name: this.name,
      ...(this.#definition.description !== undefined && { description: this.#definition.description }),
      delivery: this.delivery,
      inputSchema: jsonSchemaOf(this.#definition.inputSchema),
      payloadSchema: jsonSchemaOf(this.#definition.payloadSchema),
    };
    return this.#descriptor;
  }

  offers(mode: DeliveryMode): boolean {
    return this.delivery.includes(mode);
  }

  /** The arguments as the schema outputs them, or what is wrong with them. */
  async parseArguments(args: JsonObject): Promise<Checked<Args>> {
    return validate(this.#definition.inputSchema, args) as Promise<Checked<Args>>;
  }

  /** The payload as the schema outputs it, or what is wrong with it. */
  async parseData(data: unknown): Promise<Checked<Data>> {
    return validate(this.#definition.payloadSchema, data) as Promise<Checked<Data>>;
  }

  matches(args: Args, data: Data): boolean {
    return this.#definition.matches?.(args, data) ?? true;
  }

  authorizes(principal: Principal, args: Args): boolean {
    return this.#definition.authorize?.(principal, args) ?? true;
  }

  /** The partition a subscription with `args` reads (`''`: the type has none). */
  partitionOf(args: Args): string {
    return this.#definition.partitions?.ofArguments(args) ?? '';
  }

  /**
   * Stores one occurrence in its log (`logs`: the `McpEventLog` binding, `env.MCP_EVENTS`, placed
   * as the Worker's DO_JURISDICTION and DO_LOCATION_HINT say: edge/placement.ts) and
   * returns once it is stored: every poll and push stream of a matching subscription delivers
   * it from then on. Call it from a tool, a task, an alarm or the Worker's own `fetch` (an
   * upstream's webhook arriving). A payload its schema refuses throws {@link EventEmitError}
   * and stores nothing.
   */
  async emit(logs: EventLogNamespace, emission: Emission<Data>): Promise<Omit<Appended, 'logId' | 'storedAt'>> {
    const checked = await this.parseData(emission.data);
    if (!checked.ok) throw new EventEmitError(`event type ${this.name}: the payload does not match payloadSchema: ${checked.invalid}`);
    const { eventId, timestamp } = emission;
    if (eventId !== undefined && (typeof eventId !== 'string' || eventId.length === 0 || eventId.length > MAX_EVENT_ID_LENGTH)) {
      throw new EventEmitError(`event type ${this.name}: eventId is 1 to ${MAX_EVENT_ID_LENGTH} characters`);
    }
    if (timestamp !== undefined && (typeof timestamp !== 'string' || Number.isNaN(Date.parse(timestamp)))) {
      throw new EventEmitError(`event type ${this.name}: timestamp is an ISO 8601 date-time`);
    }
    const data = JSON.stringify(checked.value);
    if (utf8Length(data) > MAX_EVENT_DATA_BYTES) {
      throw new EventEmitError(`event type ${this.name}: the payload is over ${MAX_EVENT_DATA_BYTES} bytes as JSON`);
    }
    const name = { type: this.name, partition: this.#definition.partitions?.ofData(checked.value) ?? '' };
    const {
      seq,
      eventId: id,
      timestamp: at,
      duplicate,
    } = await eventLog(placedNamespace(logs), name).append(name, this.retention, {
      data,
      ...(eventId !== undefined && { eventId }),
      ...(timestamp !== undefined && { timestamp }),
    });
    return { seq, eventId: id, timestamp: at, duplicate };
  }
}

/** Declares an event type (see {@link EventTypeDefinition}); list it in createMcpWorker's `events.types`. */
export function defineEventType<Args extends JsonObject, Data extends JsonObject>(
  definition: EventTypeDefinition<Args, Data>,
): EventType<Args, Data> {
  return new EventType(definition);
}

async function validate<T>(schema: StandardSchemaWithJSON<T, T>, value: unknown): Promise<Checked<T>> {
  const result = await schema['~standard'].validate(value);
  if (result.issues === undefined) return { ok: true, value: result.value };
  const where = (issue: (typeof result.issues)[number]) =>
    issue.path === undefined || issue.path.length === 0
      ? ''
      : `${issue.path.map((part) => (typeof part === 'object' ? String(part.key) : String(part))).join('.')}: `;
  return { ok: false, invalid: result.issues.map((issue) => `${where(issue)}${issue.message}`).join('; ') };
}

function jsonSchemaOf(schema: StandardSchemaWithJSON): JsonObject {
  return schema['~standard'].jsonSchema.input({ target: 'draft-2020-12' }) as JsonObject;
}
