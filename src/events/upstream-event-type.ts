/**
 * An event type backed by an upstream that keeps its own history (MCP Events, SEP-3415;
 * docs/events.md): an API's event history (GitHub's events), a database's changefeed. The
 * author supplies `read`, a function from the upstream's cursor to a page of occurrences and the
 * cursor after them; nothing is stored by this library, the upstream is the log. `events/poll`
 * reads a page or a few (upstream-poll.ts); `events/stream` reads one every `pollIntervalMs`
 * from the Worker (upstream-feed.ts), with the same messages as a log's push stream, its
 * heartbeats and errors included.
 *
 * The author's cursor is an opaque string (printable ASCII, at most MAX_UPSTREAM_CURSOR_LENGTH);
 * the client never sees it bare: it is sealed with the type and the partition its arguments name
 * (core/event-cursor.ts, version 2), so a client can neither forge a position nor carry one to
 * another type or other arguments. `cursor: null` asks "from now": the author answers the
 * upstream's head and no occurrences. An author whose upstream cannot replay answers
 * `cursor: null` always ("The server MAY send cursor: null for event types that do not support
 * replay"): each read is then from now, `truncated` is false ("truncated SHOULD be false"), and
 * clients do not persist it; "an event type that ever returns a non-null cursor SHOULD always
 * do so" is held where a read can see it — a null answer to a non-null cursor is refused.
 *
 * What the author answers is checked before anything is delivered, as `emit` checks a payload:
 * every occurrence's data against `payloadSchema`, its id and time, the page's size and length.
 * A read that throws or answers what it may not is logged with its words and answered with
 * UPSTREAM_ERROR (core/events-wire.ts), never the upstream's text. What this module leaves to
 * its neighbours: the cursor's seal (core/event-cursor.ts), paging and selection (upstream-poll.ts,
 * upstream-feed.ts), and everything a log-backed type shares (event-type.ts). Webhook delivery is
 * refused at definition: a subscription would poll the upstream on an alarm of its own.
 */
import { isUpstreamPosition, MAX_UPSTREAM_CURSOR_LENGTH } from '../core/event-cursor.ts';
import { type JsonObject, UPSTREAM_ERROR } from '../core/events-wire.ts';
import { log } from '../core/log.ts';
import { utf8Length } from '../core/utf8.ts';
import { EventEmitError, EventType, type EventTypeDefinition, MAX_EVENT_DATA_BYTES, MAX_EVENT_ID_LENGTH } from './event-type.ts';

/** What `read` is asked. */
export interface UpstreamReadRequest<Args extends JsonObject> {
  /** The upstream's position to read after, as an earlier read answered it; null: "start from now" (answer the head, no occurrences). */
  readonly cursor: string | null;
  /** The most occurrences to answer. */
  readonly limit: number;
  /** The most bytes of data (UTF-8 JSON) to answer; a page of one occurrence may pass it. */
  readonly maxBytes: number;
  /** The subscription's arguments, as `inputSchema` output them. */
  readonly args: Args;
}

export interface UpstreamOccurrence<Data extends JsonObject> {
  /** The upstream's stable id ("the server SHOULD use that value as eventId"): clients deduplicate by it. */
  readonly eventId: string;
  /** ISO 8601, when it occurred; absent, when it was read. */
  readonly timestamp?: string;
  readonly data: Data;
  /**
   * The upstream's position right after this occurrence, where it has one (a changefeed's sequence
   * number, an event id it reads after): a pushed event then carries its own cursor. Absent, a
   * pushed event carries the last position known safe (upstream-feed.ts).
   */
  readonly cursor?: string;
}

export interface UpstreamPage<Data extends JsonObject> {
  /** In the upstream's order, after the cursor read from. */
  readonly occurrences: readonly UpstreamOccurrence<Data>[];
  /** The upstream's position after them: the next read's cursor. null: the upstream cannot replay (then null always). */
  readonly cursor: string | null;
  /** The cursor read from is behind what the upstream keeps: the page starts where it can serve from. */
  readonly truncated?: boolean;
  /** More is there now, past `cursor`. Absent: a full page (`limit` occurrences) is taken to have more. */
  readonly hasMore?: boolean;
}

export interface UpstreamEventTypeDefinition<Args extends JsonObject, Data extends JsonObject>
  extends Omit<EventTypeDefinition<Args, Data>, 'retention' | 'partitions'> {
  /** One page of the upstream after `cursor`. Throwing is a transient failure: a poll is answered UpstreamError, a push stream told and retried. */
  readonly read: (request: UpstreamReadRequest<Args>) => Promise<UpstreamPage<Data>>;
  /** How often a push stream reads the upstream when it has nothing more (and a poll's `nextPollMs`). Default DEFAULT_UPSTREAM_POLL_MS. */
  readonly pollIntervalMs?: number;
  /**
   * The partition a subscription's arguments read, where the upstream's cursor depends on them
   * (a repository's events): a cursor is then refused with other arguments (`cursor_other_log`).
   */
  readonly partitionOf?: (args: Args) => string;
}

export const DEFAULT_UPSTREAM_POLL_MS = 5_000;
/** The shortest interval a type may declare. */
export const MIN_UPSTREAM_POLL_MS = 10;
/** The most bytes of data one page of the author's may carry, whatever was asked. */
export const MAX_UPSTREAM_PAGE_BYTES = 1024 * 1024;

/** A page as the author answered it, checked: data as `payloadSchema` outputs it, times resolved. */
export interface CheckedPage {
  readonly occurrences: readonly {
    readonly eventId: string;
    readonly timestamp: string;
    readonly data: JsonObject;
    /** The upstream's position right after it, when the author gave one. */
    readonly cursor?: string;
  }[];
  /** The occurrences' data, in bytes of UTF-8 JSON. */
  readonly bytes: number;
  readonly cursor: string | null;
  readonly truncated: boolean;
  readonly hasMore: boolean;
}

/** A read of the upstream failed (the author's `read` threw, or answered what it may not): its words are logged, never sent. */
export class UpstreamReadError extends Error {
  override readonly name = 'UpstreamReadError';
  constructor() {
    super(UPSTREAM_ERROR.message);
  }
}

export class UpstreamEventType<Args extends JsonObject = JsonObject, Data extends JsonObject = JsonObject> extends EventType<Args, Data> {
  readonly pollIntervalMs: number;
  readonly #read: (request: UpstreamReadRequest<JsonObject>) => Promise<unknown>;

  constructor(definition: UpstreamEventTypeDefinition<Args, Data>) {
    const { read, pollIntervalMs = DEFAULT_UPSTREAM_POLL_MS, partitionOf, ...rest } = definition;
    super({ ...rest, ...(partitionOf !== undefined && { partitions: { ofData: () => '', ofArguments: partitionOf } }) });
    // A webhook subscription would have to read the author's upstream on an alarm of its own, a
    // row written per interval per subscription, whether anything happened or not: not offered
    // (docs/events.md, *Webhooks*). events/subscribe of such a type is Unsupported.
    if (this.offers('webhook')) {
      throw new TypeError(`event type ${this.name}: an upstream-backed type is delivered by poll and push only, not webhook`);
    }
    if (!Number.isSafeInteger(pollIntervalMs) || pollIntervalMs < MIN_UPSTREAM_POLL_MS) {
      throw new TypeError(`event type ${this.name}: pollIntervalMs is an integer of at least ${MIN_UPSTREAM_POLL_MS}`);
    }
    this.pollIntervalMs = pollIntervalMs;
    this.#read = read as unknown as (request: UpstreamReadRequest<JsonObject>) => Promise<unknown>;
  }

  /** Nothing is emitted to an upstream-backed type: its occurrences are its upstream's. */
  override emit(): Promise<never> {
    return Promise.reject(new EventEmitError(`event type ${this.name} is read from its upstream: nothing is emitted to it`));
  }

  /** One page after `cursor`, checked; or UpstreamReadError, the author's words logged. */
  async readPage(args: JsonObject, cursor: string | null, limit: number, maxBytes: number): Promise<CheckedPage> {
    let page: unknown;
    try {
      page = await this.#read({ cursor, limit, maxBytes, args });
    } catch (error) {
      throw this.#failed(`read threw: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
    const checked = await this.#check(page, cursor, limit, maxBytes);
    if (typeof checked === 'string') throw this.#failed(checked);
    return checked;
  }

  async #check(page: unknown, from: string | null, limit: number, maxBytes: number): Promise<CheckedPage | string> {
    if (typeof page !== 'object' || page === null) return 'read answered no page';
    const { occurrences, cursor, truncated, hasMore } = page as Partial<Record<keyof UpstreamPage<JsonObject>, unknown>>;
    if (!Array.isArray(occurrences)) return 'read answered no occurrences array';
    if (occurrences.length > limit) return `read answered ${occurrences.length} occurrences, past its limit of ${limit}`;
    if (cursor !== null && !isUpstreamPosition(cursor)) {
      return `read answered a cursor that is not 1 to ${MAX_UPSTREAM_CURSOR_LENGTH} printable ASCII characters, nor null`;
    }
    // "Servers SHOULD be consistent: an event type that ever returns a non-null cursor SHOULD always do so."
    if (from !== null && cursor === null) return 'read answered cursor null after a non-null cursor';
    // "null means "start from now": the server returns no events and a fresh cursor".
    if (from === null && cursor !== null && occurrences.length > 0) return 'read from now (cursor null) answered occurrences';
    if ((truncated !== undefined && typeof truncated !== 'boolean') || (hasMore !== undefined && typeof hasMore !== 'boolean')) {
      return 'read answered truncated or hasMore that is not a boolean';
    }
    const checked: CheckedPage['occurrences'][number][] = [];
    let bytes = 0;
    const readAt = new Date().toISOString();
    for (const [index, occurrence] of (occurrences as unknown[]).entries()) {
      const {
        eventId,
        timestamp,
        data,
        cursor: after,
      } = (typeof occurrence === 'object' && occurrence !== null ? occurrence : {}) as Record<string, unknown>;
      if (typeof eventId !== 'string' || eventId.length === 0 || eventId.length > MAX_EVENT_ID_LENGTH) {
        return `occurrence ${index}: eventId is 1 to ${MAX_EVENT_ID_LENGTH} characters`;
      }
      if (timestamp !== undefined && (typeof timestamp !== 'string' || Number.isNaN(Date.parse(timestamp)))) {
        return `occurrence ${index}: timestamp is an ISO 8601 date-time`;
      }
      if (after !== undefined && (cursor === null || !isUpstreamPosition(after))) {
        return `occurrence ${index}: its cursor is 1 to ${MAX_UPSTREAM_CURSOR_LENGTH} printable ASCII characters, and only where the page's is not null`;
      }
      const parsed = await this.parseData(data);
      if (!parsed.ok) return `occurrence ${index}: the payload does not match payloadSchema: ${parsed.invalid}`;
      const size = utf8Length(JSON.stringify(parsed.value));
      if (size > MAX_EVENT_DATA_BYTES) return `occurrence ${index}: the payload is over ${MAX_EVENT_DATA_BYTES} bytes as JSON`;
      bytes += size;
      checked.push({
        eventId,
        timestamp: timestamp ?? readAt,
        data: parsed.value,
        ...(after !== undefined && { cursor: after as string }),
      });
    }
    if (checked.length > 1 && bytes > Math.min(maxBytes, MAX_UPSTREAM_PAGE_BYTES)) {
      return `read answered ${bytes} bytes of data, past its bound of ${Math.min(maxBytes, MAX_UPSTREAM_PAGE_BYTES)}`;
    }
    const replays = cursor !== null;
    return {
      occurrences: checked,
      bytes,
      cursor,
      // "For event types that do not support replay, truncated SHOULD be false."
      truncated: replays && truncated === true,
      hasMore: replays && (hasMore ?? checked.length === limit),
    };
  }

  #failed(detail: string): UpstreamReadError {
    log({ msg: 'mcp.events.upstream_error', type: this.name, error: detail });
    return new UpstreamReadError();
  }
}

/**
 * Declares an event type whose occurrences its upstream keeps (see {@link UpstreamEventTypeDefinition});
 * list it in createMcpWorker's `events.types` beside the log-backed ones.
 */
export function defineUpstreamEventType<Args extends JsonObject, Data extends JsonObject>(
  definition: UpstreamEventTypeDefinition<Args, Data>,
): UpstreamEventType<Args, Data> {
  return new UpstreamEventType(definition);
}
