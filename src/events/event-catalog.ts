/**
 * The event types a server serves (createMcpWorker's `events.types`, and, where the Worker
 * serves tasks, the type of task event sources: task-source.ts), by name, and their listing: `events/list` pages through them in declaration order ("`nextCursor` … same
 * semantics as `tools/list`"). The types are fixed for the Worker's life (declared in code), so
 * the server's settings declare no `listChanged` and no `notifications/events/list_changed` is
 * ever due: a deploy that changes them is a new Worker, and a client lists again when it
 * reconnects.
 */
import { type EventTypeDescriptor, type ListEventsResult, refuseParams, type ParamsRefusal } from '../core/events-wire.ts';
import type { EventType } from './event-type.ts';
import { taskEventType } from './task-source.ts';

/** Types one `events/list` page carries. */
export const LIST_PAGE_SIZE = 100;

export class EventCatalog {
  readonly #types = new Map<string, EventType>();

  /**
   * `tasks`: the Worker serves tasks, so their timelines are event sources: "The named event type
   * MUST be resolvable via events/list", listed after the author's types. Its name is the
   * library's own, never an author's.
   */
  constructor(types: readonly EventType[], { tasks = false }: { readonly tasks?: boolean } = {}) {
    for (const type of types) {
      if (type.name === taskEventType.name)
        throw new TypeError(`event type ${type.name}: the name is the library's own (task event sources)`);
      if (this.#types.has(type.name)) throw new TypeError(`event type ${type.name} is declared twice`);
      this.#types.set(type.name, type);
    }
    if (tasks) this.#types.set(taskEventType.name, taskEventType as unknown as EventType);
  }

  get(name: string): EventType | undefined {
    return this.#types.get(name);
  }

  get size(): number {
    return this.#types.size;
  }

  /** One page of `events/list` from the pagination `cursor` (the offset, as this server wrote it), or its refusal. */
  list(cursor: string | undefined): Omit<ListEventsResult, 'resultType'> | ParamsRefusal {
    const offset = cursor === undefined ? 0 : pageOffset(cursor);
    if (offset === undefined || offset > this.#types.size) return refuseParams('cursor is not one events/list gave', 'malformed_cursor');
    const events: EventTypeDescriptor[] = [...this.#types.values()].slice(offset, offset + LIST_PAGE_SIZE).map((type) => type.descriptor);
    const next = offset + LIST_PAGE_SIZE;
    return next < this.#types.size ? { events, nextCursor: pageCursor(next) } : { events };
  }
}

const PAGE_PREFIX = 'events-page:';
const pageCursor = (offset: number) => btoa(`${PAGE_PREFIX}${offset}`);

function pageOffset(cursor: string): number | undefined {
  let text: string;
  try {
    text = atob(cursor);
  } catch {
    return undefined;
  }
  const match = new RegExp(`^${PAGE_PREFIX}(0|[1-9][0-9]{0,8})$`).exec(text);
  return match === null ? undefined : Number(match[1]);
}
