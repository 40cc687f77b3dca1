// ESLint flat config. Its main job here is the trust and layering boundaries
// (docs/design.md, "Shape of the code"; docs/architecture.md, "The parts"), each an
// ESLint `no-restricted-imports` rule, proven to fire by test/unit/lint-boundaries.test.ts:
// - src/main/core and src/shared never import 'electron' (the core is plain Node so it
//   can run, and be tested, without the Electron binary); nor do the renderer and the extension;
// - src/shared imports no Node module (`node:*` or a bare builtin): it is compiled into
//   the extension and the renderer too;
// - the renderer and the extension never import the core or the hosts (src/main,
//   src/preload, src/native-host): what they share with them lives in src/shared
//   (the console API in ipc.ts, the web host's wire in web-wire.ts);
// - src/shared imports nothing from the parts that use it.
// Flat config gives a file the LAST matching config's options for a rule, so each
// area below gets one `no-restricted-imports` with all of its restrictions.
import { builtinModules } from 'node:module';
import tseslint from 'typescript-eslint';

const NO_ELECTRON = {
  paths: [{ name: 'electron', message: "src/main/core, src/shared, the renderer and the extension must not import 'electron' (docs/design.md, 'Shape of the code')." }],
  patterns: [{ group: ['electron/*'], message: "no 'electron' imports here" }],
};

const builtins = builtinModules.filter((m) => !m.startsWith('node:')).map((m) => m.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
const NO_NODE = {
  patterns: [{
    regex: `^(node:.*|(${builtins.join('|')})(/.*)?)$`,
    message: 'src/shared imports no Node module (node:* or a bare builtin): it runs in the extension and the renderer too. Put Node code beside the core (e.g. src/main/core/digest.ts).',
  }],
};

// Relative climbs out of the folder into src/{main,preload,native-host}, or any path naming src/<host>.
const NO_CORE_OR_HOSTS = {
  patterns: [
    {
      regex: '(^|/)src/(main|preload|native-host)(/|$)',
      message: 'the renderer, the extension and src/shared never import the core or the hosts (src/main, src/preload, src/native-host); share through src/shared.',
    },
    {
      regex: '^(\\.\\./)+(main|preload|native-host)(/|$)',
      message: 'the renderer, the extension and src/shared never import the core or the hosts (src/main, src/preload, src/native-host); share through src/shared.',
    },
  ],
};

const NO_USERS_OF_SHARED = {
  patterns: [{
    regex: '^(\\.\\./)+(renderer|extension)(/|$)|(^|/)src/renderer(/|$)|(^|/)extension/src(/|$)',
    message: 'src/shared imports nothing from the parts that use it (the renderer, the extension).',
  }],
};

/** One `no-restricted-imports` setting made of several restriction sets. */
function restrict(...sets) {
  return ['error', { paths: sets.flatMap((s) => s.paths ?? []), patterns: sets.flatMap((s) => s.patterns ?? []) }];
}

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'extension/dist/**', 'node_modules/**', 'test-results/**', 'playwright-report/**'] },
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: { parser: tseslint.parser },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {},
  },
  {
    files: ['src/main/core/**/*.{ts,tsx,mts,mjs,js}'],
    rules: { 'no-restricted-imports': restrict(NO_ELECTRON) },
  },
  {
    files: ['src/shared/**/*.{ts,tsx,mts,mjs,js}'],
    rules: { 'no-restricted-imports': restrict(NO_ELECTRON, NO_NODE, NO_CORE_OR_HOSTS, NO_USERS_OF_SHARED) },
  },
  {
    files: ['extension/**/*.{ts,tsx,mts,mjs,js}', 'src/renderer/**/*.{ts,tsx,mts,mjs,js}'],
    rules: { 'no-restricted-imports': restrict(NO_ELECTRON, NO_CORE_OR_HOSTS) },
  },
);
