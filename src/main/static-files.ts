/**
 * Serving the built renderer's files, for both hosts (the Electron `app:`
 * protocol handler and the loopback web host): one path-confinement rule and
 * one content-type table. Plain Node, no 'electron' import.
 */
import path from 'node:path';

/** Content types of the files the renderer build emits. */
export const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

/** The content type for a file name (`application/octet-stream` when unknown). */
export function contentTypeOf(file: string): string {
  return CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}

/**
 * Map a request path (`/`, `/assets/index-abc.js?x`) to a file inside `root`, or
 * `null`. Only plain paths of safe characters are served; `..`, percent-encoded
 * bytes, backslashes, NUL, empty segments, dot-files and anything resolving
 * outside `root` are refused. `/` is index.html.
 * @param root an absolute folder path.
 */
export function resolveStatic(root: string, rawPath: string): string | null {
  const pathname = rawPath.split(/[?#]/)[0] ?? '/';
  if (!/^\/[A-Za-z0-9._\-/]*$/.test(pathname)) return null;
  const rel = pathname === '/' ? 'index.html' : pathname.slice(1);
  if (rel.split('/').some((seg) => seg === '' || seg.startsWith('.'))) return null;
  const base = path.resolve(root);
  const file = path.resolve(base, rel);
  return file.startsWith(base + path.sep) ? file : null;
}
