/**
 * What the library uses of `AsyncLocalStorage` (node:async_hooks, which workerd provides under
 * `nodejs_compat`). Exported values are declared with this, not with the Node class, so the
 * published declarations need no Node types: a Worker's tsconfig with `skipLibCheck: false` and
 * only the Workers types compiles them.
 */
export interface Scope<T> {
  getStore(): T | undefined;
  run<R>(store: T, callback: () => R): R;
}
