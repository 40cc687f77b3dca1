// The React demo shop (resources/demo/store). The demo server builds it in
// memory at start (test/support/demo-servers.ts) with this same config; for
// hot reload while editing it: `npx vite --config vite.demo.config.ts`.
// It is a DEVELOPMENT build on purpose: React Strict Mode double-runs effects
// only in development, and the end-to-end tests check that the WebMCP
// registration survives exactly that.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig, type InlineConfig } from 'vite';

export const DEMO_STORE_ROOT = fileURLToPath(new URL('./resources/demo/store', import.meta.url));

export function demoStoreViteConfig(): InlineConfig {
  return {
    configFile: false,
    root: DEMO_STORE_ROOT,
    base: '/store/',
    mode: 'development',
    logLevel: 'warn',
    clearScreen: false,
    plugins: [react()],
    define: { 'process.env.NODE_ENV': JSON.stringify('development') },
    build: {
      outDir: fileURLToPath(new URL('./out/demo/store', import.meta.url)),
      emptyOutDir: true,
      minify: false,
      sourcemap: false,
      target: 'es2022',
      reportCompressedSize: false,
      // Three pages: the shop (WebMCP tools); signup.html, a React form with controlled inputs and no
      // tools; inbox.html, a React list keyed by index.
      rollupOptions: { input: { index: `${DEMO_STORE_ROOT}/index.html`, signup: `${DEMO_STORE_ROOT}/signup.html`, inbox: `${DEMO_STORE_ROOT}/inbox.html` } },
    },
    server: { host: '127.0.0.1', port: 8765, strictPort: true, hmr: false },
  };
}

export default defineConfig(demoStoreViteConfig());
