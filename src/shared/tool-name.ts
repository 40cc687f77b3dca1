/** Tool names as a person reads them: one look-alike rule for discovery's warnings and for page lint. */

/**
 * A look-alike skeleton of a tool name: case folded, separators dropped, and
 * characters that read alike at a glance merged (0/o, 1/l/i/|, 5/s, 2/z, 8/b,
 * rn/m, vv/w, cl/d). Two different names with one skeleton ("delete_all" and
 * "de1ete-all") can be mistaken for each other by a person approving. Names
 * are already ASCII (LIMITS.toolNamePattern), so Unicode confusables cannot occur.
 */
export function nameSkeleton(name: string): string {
  return name
    .toLowerCase()
    .replace(/[_.-]/g, '')
    .replace(/rn/g, 'm')
    .replace(/vv/g, 'w')
    .replace(/cl/g, 'd')
    .replace(/0/g, 'o')
    .replace(/[1i|]/g, 'l')
    .replace(/5/g, 's')
    .replace(/2/g, 'z')
    .replace(/8/g, 'b');
}
