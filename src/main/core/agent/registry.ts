/**
 * The registry of agent tools: the endpoint's `tools/list` and `tools/call`
 * read it at every request, so it can change at run time (developer mode adds
 * tools). Every change is announced to the listeners: the endpoint then sends
 * MCP `notifications/tools/list_changed` to every session (MCP spec
 * 2025-06-18, "Tools", "List Changed Notification").
 */
import type { Faculty } from '../../../shared/receipt';
import type { AgentTool } from './tool';

/** Why a known tool is not in the registry now (developer mode off), for the refusal of a call to it. */
export interface DormantTool {
  faculty: Faculty;
  code: string;
  message: string;
}

export class AgentToolRegistry {
  private readonly tools = new Map<string, AgentTool>();
  private readonly listeners = new Set<() => void>();
  private readonly dormant = new Map<string, DormantTool>();

  /** @throws Error when two tools share a name. */
  constructor(initial: readonly AgentTool[] = []) {
    for (const t of initial) this.addQuietly(t);
  }

  /** The tools, in the order they were added. */
  list(): AgentTool[] {
    return [...this.tools.values()];
  }

  /** One tool by name, or undefined (names not in the registry are unknown tools). */
  get(name: string): AgentTool | undefined {
    return this.tools.get(name);
  }

  /**
   * Add a tool and announce the change.
   * @throws Error when a tool of that name is already registered (a tool is replaced only by removing it first).
   */
  add(tool: AgentTool): void {
    this.addQuietly(tool);
    this.announce();
  }

  /** Remove a tool by name and announce the change; false when there was none. */
  remove(name: string): boolean {
    const had = this.tools.delete(name);
    if (had) this.announce();
    return had;
  }

  /**
   * Declare a tool that exists only at times (developer mode's): a call to it while it is absent
   * is refused with `why` (code, message, receipt faculty) rather than as an unknown tool.
   */
  setDormant(name: string, why: DormantTool): void {
    this.dormant.set(name, { ...why });
  }

  /** Why `name` is absent now, when it is a tool that exists only at times and is absent; else undefined. */
  dormantOf(name: string): DormantTool | undefined {
    return this.tools.has(name) ? undefined : this.dormant.get(name);
  }

  /** Listen to changes; returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private addQuietly(tool: AgentTool): void {
    if (this.tools.has(tool.name)) throw new Error(`agent tool ${JSON.stringify(tool.name)} is already registered`);
    this.tools.set(tool.name, tool);
  }

  private announce(): void {
    for (const l of this.listeners) {
      try {
        l();
      } catch {
        /* a listener's failure is its own */
      }
    }
  }
}
