/**
 * Text with the ids and hashes the console and Chrome make replaced by placeholders, for checks
 * that a secret of digits ("4242", "918273") appears nowhere: a random receipt UUID, a Chrome
 * documentId (32 upper-case hex digits) or a SHA-256 (64 hex digits) may hold those digits by
 * chance. A secret of the page is never one of these shapes, so nothing it could leak is hidden.
 */
export function withoutConsoleIds(text: string): string {
  return text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>')
    .replace(/\b[0-9A-F]{32}\b/g, '<documentId>')
    .replace(/\b[0-9a-f]{64}\b/g, '<sha256>');
}
