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
