// ESLint flat config. Its main job here is a trust boundary: src/main/core and
// src/shared must never import 'electron' (docs/design.md, "Shape of the code": the core is plain Node so
// it can run, and be tested, without the Electron binary).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'extension/dist/**', 'node_modules/**', 'test-results/**', 'playwright-report/**'] },
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: { parser: tseslint.parser },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {},
  },
  {
    files: ['src/main/core/**/*.ts', 'src/shared/**/*.ts', 'extension/**/*.ts', 'src/renderer/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [{ name: 'electron', message: "src/main/core, src/shared, the renderer and the extension must not import 'electron' (docs/design.md, 'Shape of the code')." }],
        patterns: [{ group: ['electron/*'], message: "no 'electron' imports here" }],
      }],
    },
  },
);
