// `window.echo` exists only inside the Electron host (src/preload/index.ts).
import type { EchoApi } from '../preload/api';

declare global {
  interface Window {
    echo?: EchoApi;
  }
}
