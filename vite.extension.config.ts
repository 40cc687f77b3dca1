/**
 * Builds the MV3 extension into extension/dist, the folder `--load-extension`
 * loads (gitignored). `npm run build:extension` runs this one config; it makes
 * two bundles because Chrome needs two formats:
 *  1. the service worker (`background.js`, an ES module: manifest
 *     `background.type: "module"`) and the popup (HTML + an ES module script),
 *     sharing chunks under `chunks/`;
 *  2. every content module, i.e. every `extension/src/content/*.ts` (found by
 *     listing the folder, so a faculty's new module needs no edit here), each
 *     as its own classic IIFE `content/<name>.js` with no imports: content
 *     scripts cannot be ES modules
 *     (developer.chrome.com/docs/extensions/reference/api/scripting#type-ScriptInjection),
 *     and an IIFE build takes one entry.
 * Builds 2 run from build 1's `closeBundle`, so a single `vite build` makes
 * all; then manifest.json is copied. Nothing is fetched at run time (MV3
 * forbids remote code; the CSP in manifest.json says `script-src 'self'`).
 */
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { build, defineConfig, type Plugin } from 'vite';

const root = resolve(import.meta.dirname, 'extension/src');
const outDir = resolve(import.meta.dirname, 'extension/dist');

/** The content modules: every `*.ts` directly in extension/src/content (sorted, so the build order is stable). */
function contentModules(): string[] {
  return readdirSync(resolve(root, 'content'))
    .filter((f) => /^[a-z0-9-]+\.ts$/.test(f) && !f.endsWith('.d.ts'))
    .map((f) => f.slice(0, -'.ts'.length))
    .sort();
}

function contentScriptAndManifest(): Plugin {
  return {
    name: 'echo-extension-content-and-manifest',
    apply: 'build',
    async closeBundle() {
      for (const name of contentModules()) await build({
        configFile: false,
        logLevel: 'warn',
        build: {
          outDir: resolve(outDir, 'content'),
          emptyOutDir: false,
          minify: false,
          sourcemap: false,
          target: 'chrome120',
          lib: {
            entry: resolve(root, `content/${name}.ts`),
            formats: ['iife'],
            name: 'echoConsoleContent',
            fileName: () => `${name}.js`,
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
