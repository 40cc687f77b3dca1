// Builds the console's node-side tools into out/tools (npm run build:tools).
// Each entry is one self-contained ES module for Node >= 18: dependencies are
// bundled (the native host must run from the app's folder, even outside
// node_modules and inside an unpacked asar), Node built-ins stay imports.
// To add a tool, add one line to `entries`: output name → source file.
import { builtinModules } from 'node:module';
import { defineConfig } from 'vite';

export const entries: Record<string, string> = {
  // Chrome starts this through the launcher written by src/main/core/bridge/host-manifest.ts.
  'native-host': 'src/native-host/host.ts',
};

/** Packages that must stay external (native addons cannot be bundled). */
const external = [/^node:/, ...builtinModules, 'better-sqlite3', 'electron'];

export default defineConfig({
  build: {
    ssr: true,
    outDir: 'out/tools',
    emptyOutDir: true,
    target: 'node18',
    minify: false,
    sourcemap: false,
    rolldownOptions: {
      input: entries,
      external,
      output: { format: 'es', entryFileNames: '[name].mjs', chunkFileNames: 'chunks/[name]-[hash].mjs' },
    },
  },
  ssr: { noExternal: true, target: 'node' },
});
