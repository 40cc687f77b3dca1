/**
 * Paths of files that a packaged app keeps outside its asar archive.
 *
 * electron-builder packs the app into `<resources>/app.asar` and puts the files
 * matched by `asarUnpack` (electron-builder.yml) in `<resources>/app.asar.unpacked`
 * at the same relative path. Inside Electron, `import.meta.url` of the main bundle
 * points into `app.asar`; a path handed to another program (the native host script
 * the launcher runs with a system `node` or the app's executable as Node,
 * docs/link.md) must point at the unpacked copy, since only Electron's own
 * `fs` can read inside an archive. docs/packaging.md lists what is unpacked.
 */

const ASAR_SEGMENT = /([\\/])app\.asar([\\/])/;

/**
 * The unpacked twin of `file`: the first `/app.asar/` (or `\app.asar\`) segment
 * becomes `/app.asar.unpacked/`. Paths outside an archive (a development checkout,
 * the web host) come back unchanged.
 * @param file absolute path, POSIX or Windows separators.
 */
export function unpackedPath(file: string): string {
  return file.replace(ASAR_SEGMENT, '$1app.asar.unpacked$2');
}
