// Build of the Electron host (main), the sandboxed preload and the React
// renderer, plus the loopback web host (plain Node) that serves the same
// renderer to a browser. Output in out/: main/index.js (Electron main, ESM),
// main/web.js (`npm run start:web`), preload/index.cjs (sandboxed preloads must
// be CommonJS and self-contained), renderer/ (static files).
import { resolve } from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'electron-vite';

export default defineConfig({
  main: {
    build: {
      rolldownOptions: {
        input: {
          index: resolve('src/main/index.ts'),
          web: resolve('src/main/web/index.ts'),
        },
      },
    },
  },
  preload: {
    build: {
      // Bundle everything: a sandboxed preload can `require` only 'electron' and a few built-ins.
      externalizeDeps: false,
      rolldownOptions: {
        input: { index: resolve('src/preload/index.ts') },
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve('src/renderer'),
    plugins: [react()],
    build: {
      // electron-vite leaves the renderer unminified; minified, the bundle the console starts with
      // is about half the bytes to parse (the timeline's first screenful, `npm run bench -- timeline`).
      minify: true,
      outDir: resolve('out/renderer'),
      rolldownOptions: { input: resolve('src/renderer/index.html') },
    },
  },
});
