/**
 * At most one live connection per stream. Attaching a connection to a stream fences the
 * one it replaces: the old connection is closed in the same synchronous step, so no event
 * appended after the switch can reach it.
 */
import type { Connection, Delivery } from './connection.ts';

export class ConnectionTable {
  readonly #byStream = new Map<number, Connection>();

  attach(stream: number, connection: Connection): void {
    const fenced = this.#byStream.get(stream);
    this.#byStream.set(stream, connection);
    if (fenced !== undefined && fenced !== connection) fenced.close();
  }

  /** Forgets `connection` if it is still the stream's live one (a fenced one is not). */
  release(stream: number, connection: Connection): void {
    if (this.#byStream.get(stream) === connection) this.#byStream.delete(stream);
  }

  deliver(stream: number, event: Delivery): void {
    this.#byStream.get(stream)?.deliver(event);
  }

  /**
   * The stream has ended: its connection delivers what it still owes, then closes (and
   * releases itself). It stays the stream's connection until then, so a newer attachment
   * still fences it.
   */
  finish(stream: number): void {
    this.#byStream.get(stream)?.finish();
  }

  /** Closes the stream's live connection now, if any; the stream itself goes on. */
  close(stream: number): void {
    const connection = this.#byStream.get(stream);
    this.#byStream.delete(stream);
    connection?.close();
  }

  closeAll(): void {
    for (const stream of [...this.#byStream.keys()]) this.close(stream);
  }

  get size(): number {
    return this.#byStream.size;
  }
}
