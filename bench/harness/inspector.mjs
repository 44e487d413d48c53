// The Worker isolate's own memory, read through workerd's inspector (the DevTools protocol), for
// H1 (workloads/h-held-streams.mjs). Why the inspector and not RSS: local workerd runs a Worker
// and its Durable Objects in one process, keeps an evicted object's memory (its pages are not
// given back), and counts every native buffer; the isolate's JavaScript heap, read after a forced
// collection, is what the Worker's code holds and nothing else. What this module does not do:
// profile CPU (the profiler charges a native call's time to its JS caller many times over:
// bench/README.md), or attach anything to a peer that measures time — only a helper started with
// `inspect` in bench/peers/index.mjs has an inspector port.
//
//   const inspector = await openInspector(port, 'peer');   // workerd's inspector on 127.0.0.1:port
//   await inspector.heapAfterGc(poke);                     // { usedBytes, totalBytes, embedderBytes, backingBytes }
//                                                          // (poke: a request that makes the isolate run)
//   inspector.close();
//
// Plain Node (its global WebSocket), no dependencies.

const CONNECT_TIMEOUT_MS = 10_000;
const COMMAND_TIMEOUT_MS = 60_000;
/** How many requests may be sent to make the isolate run a collection, and the wait after each. */
const POKES = 50;
const POKE_WAIT_MS = 200;

/**
 * Opens a DevTools session on the isolate of the Worker named `worker` (workerd-host.mjs names
 * its Worker `peer`; workerd's inspector lists one target per Worker, `core:user:<name>`).
 */
export async function openInspector(port, worker = 'peer') {
  const response = await fetch(`http://127.0.0.1:${port}/json`, { signal: AbortSignal.timeout(CONNECT_TIMEOUT_MS) });
  if (!response.ok) throw new Error(`inspector at 127.0.0.1:${port}: /json answered HTTP ${response.status}`);
  const targets = await response.json();
  const target = targets.find((t) => t.id === `core:user:${worker}`) ?? targets.find((t) => String(t.id).endsWith(`:${worker}`));
  if (target?.webSocketDebuggerUrl === undefined) {
    throw new Error(`inspector at 127.0.0.1:${port}: no target for Worker "${worker}" (targets: ${targets.map((t) => t.id).join(', ')})`);
  }
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`inspector: no connection to ${target.webSocketDebuggerUrl} within ${CONNECT_TIMEOUT_MS} ms`)),
      CONNECT_TIMEOUT_MS,
    );
    const settle = (error) => {
      clearTimeout(timer);
      if (error === undefined) resolve();
      else reject(error);
    };
    socket.addEventListener('open', () => settle(), { once: true });
    socket.addEventListener('error', () => settle(new Error(`inspector: cannot connect to ${target.webSocketDebuggerUrl}`)), {
      once: true,
    });
  });
  let nextId = 1;
  const pending = new Map();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data));
    const waiter = message.id === undefined ? undefined : pending.get(message.id);
    if (waiter === undefined) return; // an event: none is asked for
    pending.delete(message.id);
    clearTimeout(waiter.timer);
    if (message.error !== undefined) waiter.reject(new Error(`inspector ${waiter.method}: ${JSON.stringify(message.error)}`));
    else waiter.resolve(message.result);
  });
  socket.addEventListener('close', () => {
    for (const waiter of pending.values()) {
      clearTimeout(waiter.timer);
      waiter.reject(new Error(`inspector ${waiter.method}: the session closed`));
    }
    pending.clear();
  });
  const send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`inspector ${method}: no answer within ${COMMAND_TIMEOUT_MS} ms`));
      }, COMMAND_TIMEOUT_MS);
      pending.set(id, { method, resolve, reject, timer });
      socket.send(JSON.stringify({ id, method, params }));
    });

  return {
    target: target.id,
    send,
    /**
     * A full collection, then the heap: what is live in the isolate, in bytes. workerd runs the
     * collection the inspector asks for as a task of the isolate, when it next runs something:
     * `poke()` makes it run (a request to the Worker), and is repeated until the collection is done.
     */
    async heapAfterGc(poke) {
      const collected = send('HeapProfiler.collectGarbage');
      let done = false;
      collected.then(
        () => (done = true),
        () => (done = true),
      );
      for (let tries = 0; !done && tries < POKES; tries++) {
        await poke();
        await Promise.race([collected.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, POKE_WAIT_MS))]);
      }
      await collected;
      const usage = await send('Runtime.getHeapUsage');
      return {
        usedBytes: usage.usedSize,
        totalBytes: usage.totalSize,
        // What workerd's C++ objects behind JS ones hold (cppgc), and ArrayBuffers' backing stores.
        embedderBytes: usage.embedderHeapUsedSize ?? null,
        backingBytes: usage.backingStorageSize ?? null,
      };
    },
    close() {
      socket.close();
    },
  };
}
