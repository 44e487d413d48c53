// The one Node API this project uses (workerd provides it under `nodejs_compat`). Declared
// here rather than pulling in @types/node, whose globals clash with the Workers types.
declare module 'node:async_hooks' {
  export class AsyncLocalStorage<T> {
    getStore(): T | undefined;
    run<R>(store: T, callback: () => R): R;
  }
}
