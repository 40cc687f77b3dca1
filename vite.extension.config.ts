/**
 * Builds the MV3 extension into extension/dist, the folder `--load-extension`
 * loads (gitignored). `npm run build:extension` runs this one config; it makes
 * two bundles because Chrome needs two formats:
 *  1. the service worker (`background.js`, an ES module: manifest
 *     `background.type: "module"`) and the popup (HTML + an ES module script),
 *     sharing chunks under `chunks/`;
 *  2. the content script (`content/webmcp.js`) as one classic IIFE with no
 *     imports: content scripts cannot be ES modules
 *     (developer.chrome.com/docs/extensions/reference/api/scripting#type-ScriptInjection).
 * Build 2 runs from build 1's `closeBundle`, so a single `vite build` makes
 * both; then manifest.json is copied. Nothing is fetched at run time (MV3
 * forbids remote code; the CSP in manifest.json says `script-src 'self'`).
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { build, defineConfig, type Plugin } from 'vite';

const root = resolve(import.meta.dirname, 'extension/src');
const outDir = resolve(import.meta.dirname, 'extension/dist');

function contentScriptAndManifest(): Plugin {
  return {
    name: 'echo-extension-content-and-manifest',
    apply: 'build',
    async closeBundle() {
      await build({
        configFile: false,
        logLevel: 'warn',
        build: {
          outDir: resolve(outDir, 'content'),
          emptyOutDir: false,
          minify: false,
          sourcemap: false,
          target: 'chrome120',
          lib: {
            entry: resolve(root, 'content/webmcp.ts'),
            formats: ['iife'],
            name: 'echoConsoleContent',
            fileName: () => 'webmcp.js',
          },
        },
      });
      mkdirSync(outDir, { recursive: true });
      copyFileSync(resolve(import.meta.dirname, 'extension/manifest.json'), resolve(outDir, 'manifest.json'));
    },
  };
}

export default defineConfig({
  root,
  base: './',
  publicDir: false,
  logLevel: 'warn',
  build: {
    outDir,
    emptyOutDir: true,
    minify: false,
    sourcemap: false,
    target: 'chrome120',
    modulePreload: false,
    rollupOptions: {
      input: {
        background: resolve(root, 'background/index.ts'),
        popup: resolve(root, 'popup/popup.html'),
      },
      output: {
        entryFileNames: (chunk) => (chunk.name === 'background' ? 'background.js' : 'popup/[name].js'),
        chunkFileNames: 'chunks/[name]-[hash].js',
        assetFileNames: 'popup/[name][extname]',
      },
    },
  },
  plugins: [contentScriptAndManifest()],
});
