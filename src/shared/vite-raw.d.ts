/**
 * Vite's `?raw` imports: the file's text as a string, bundled as a string literal
 * (https://vite.dev/guide/assets#importing-asset-as-string). Used for data read only on
 * demand, so the bundle does not compile it as code at start (src/renderer/text.ts).
 */
declare module '*?raw' {
  const text: string;
  export default text;
}
