// `window.echo` exists only inside the Electron host (src/preload/index.ts).
import type { EchoApi } from '../shared/ipc';

declare global {
  interface Window {
    echo?: EchoApi;
  }
}
