/**
 * The WebMCP surface of Chromium 156 (--enable-features=WebMCPTesting), as
 * observed on this machine (see docs/browser-facts.md and docs/demo.md).
 * Typed under our own names so they never collide with a future lib.dom.
 */
export {};

declare global {
  interface WebMcpAnnotations {
    readOnlyHint?: boolean;
    untrustedContentHint?: boolean;
    consequentialHint?: boolean;
    debugging?: boolean;
  }

  interface WebMcpToolDefinition {
    /** `[A-Za-z0-9_.-]{1,128}`; anything else rejects with `InvalidStateError: Invalid tool name`. */
    name: string;
    title?: string;
    /** Required; `''` rejects with `InvalidStateError: Description is required`. */
    description: string;
    inputSchema?: object;
    annotations?: WebMcpAnnotations;
    /** Its value comes back from `executeTool` as a string (JSON for objects; see docs/demo.md). */
    execute: (input: Record<string, unknown>, client?: unknown) => unknown;
  }

  interface WebMcpRegisteredTool {
    readonly name: string;
    readonly title: string;
    readonly description: string;
    readonly inputSchema: object;
    /** Absent unless the registration passed `annotations` (and always absent for form tools). */
    readonly annotations?: Required<WebMcpAnnotations>;
    readonly origin: string;
    readonly window: Window | null;
  }

  interface WebMcpModelContext extends EventTarget {
    registerTool(tool: WebMcpToolDefinition, options?: { signal?: AbortSignal }): Promise<void>;
    getTools(): Promise<WebMcpRegisteredTool[]>;
    executeTool(tool: WebMcpRegisteredTool, args: object, options?: { signal?: AbortSignal }): Promise<string | null>;
  }

  interface Document {
    readonly modelContext?: WebMcpModelContext;
  }
}
