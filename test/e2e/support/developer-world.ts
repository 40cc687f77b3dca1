/**
 * A world for developer mode end to end (issue 11): the real core with the gate `node out/main/web.js
 * --developer-mode` builds (src/main/web/index.ts), its idle timer in the test's hand, and the web
 * host serving the BUILT renderer to the same Chromium as the real extension.
 * Used by e2e/raw-javascript and e2e/developer-console.
 */
import { rendererAttestedGate } from '../../../src/main/core/trusted-input';
import { startWebHost, type WebHost } from '../../../src/main/web/server';
import type { LinkWorld, LinkWorldOptions } from './link-fixture';
import { RENDERER_DIR } from './real-console';

export interface DeveloperWorld {
  world: LinkWorld;
  /** The web host (close it at the end of the test). */
  host: WebHost;
  /** Whether the idle timer is armed (developer mode on). */
  idleArmed(): boolean;
  /** Fire the idle timer now, as if N minutes passed with no input (no timed assertion); throws when it is not armed. */
  fireIdle(): void;
}

/** Launch the world (through the fixture's `launchWorld`) and its web host. */
export async function launchDeveloperWorld(launchWorld: (o?: LinkWorldOptions) => Promise<LinkWorld>): Promise<DeveloperWorld> {
  let idle: (() => void) | null = null;
  const world = await launchWorld({
    core: {
      inputGate: rendererAttestedGate({ developerMode: true }),
      developerModeTimer: (fn) => ((idle = fn), { cancel: () => void (idle = null) }),
    },
  });
  const host = await startWebHost({ api: world.core.api, subscribe: (l) => world.core.onEvent(l), rendererDir: RENDERER_DIR, port: 0 });
  world.core.setConsoleOrigins(host.origins);
  return {
    world,
    host,
    idleArmed: () => idle !== null,
    fireIdle() {
      if (!idle) throw new Error('the idle timer is not armed: developer mode is off');
      idle();
    },
  };
}
