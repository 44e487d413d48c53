declare namespace Cloudflare {
  interface GlobalProps {
    mainModule: typeof import('../src/index.ts');
    durableNamespaces: 'DemoSession';
  }
}
