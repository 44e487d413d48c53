declare namespace Cloudflare {
  interface GlobalProps {
    mainModule: typeof import('./fixture-server/index.ts');
    durableNamespaces: 'FixtureSession';
  }
}

/** Vite's raw imports: a file's text (the README and the example it shows, test/client/example.test.ts). */
declare module '*?raw' {
  const text: string;
  export default text;
}

/** Vite's glob import (test/deploy/wrangler-configs.test.ts reads every wrangler config with it, test/repository/import-circles.test.ts every module of src/). */
interface ImportMeta {
  glob<T>(pattern: string, options: { query: string; import: 'default'; eager: true }): Record<string, T>;
}
