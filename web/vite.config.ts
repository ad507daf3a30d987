// Vite build of the single-page application: root web/, output web/dist, hashed file names under
// assets/ (served immutable by api/web-app.ts), nothing inlined (the HTML's CSP allows 'self' only).
// Each asset gets .br/.gz twins (web/precompress.ts) that api/web-app.ts serves when accepted.
// Run from the repository root: `npm run build:web` (vite build --config web/vite.config.ts).
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';
import { precompressPlugin } from './precompress.ts';

export default defineConfig({
  root: 'web',
  base: '/',
  plugins: [preact(), precompressPlugin()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
  },
});
