declare namespace Cloudflare {
  interface GlobalProps {
    mainModule: typeof import('./fixture-server/index.ts');
    durableNamespaces: 'FixtureSession';
  }
}
