/**
 * The input form handed to executeTool follows what the build reports for the
 * tool (extension/src/lib/execute-input.ts): Chromium 156 reports inputSchema as
 * an object and takes an object; Chromium 150 reports it as a JSON string and
 * takes a JSON string (it rejects an object with "Failed to parse input
 * arguments" before the tool runs). Checked against a real Chromium 150 as well
 * (docs/browser-facts.md, "WebMCP: running tools").
 */
import { describe, expect, it } from 'vitest';
import { executeInput } from '../../extension/src/lib/execute-input';

describe('executeInput', () => {
  const args = { productId: 'mug', quantity: 2, note: 'ü "quoted"' };
  it('passes the object itself where the build reports schemas as objects (Chromium 156)', () => {
    expect(executeInput({ type: 'object' }, args)).toBe(args);
    expect(executeInput(undefined, args)).toBe(args);
  });
  it('passes the same arguments as JSON text where the build reports schemas as strings (Chromium 150)', () => {
    const input = executeInput('{"type":"object"}', args);
    expect(typeof input).toBe('string');
    expect(JSON.parse(input as string)).toEqual(args);
  });
});
