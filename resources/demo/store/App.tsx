import { useEffect, useLayoutEffect, useState, useSyncExternalStore } from 'react';
import { CURRENCY, MAX_QUANTITY, PRODUCTS, cartView } from './domain';
import type { StoreFacade } from './facade';
import { storeTools } from './tools';

/** Counters the end-to-end tests read: Strict Mode runs the effect twice in development. */
export interface StoreDemoDebug {
  effectRuns: number;
  cleanups: number;
  facade: StoreFacade;
}

type RegistrationStatus = { state: 'pending' } | { state: 'unavailable' } | { state: 'registered'; count: number } | { state: 'error'; message: string };

/**
 * Registers the store's tools for as long as the component is mounted. The
 * AbortController's signal goes to every registerTool call and is aborted in
 * the cleanup, which removes the tools at once (docs/browser-facts.md,
 * "WebMCP: registering tools"), so Strict Mode's
 * mount/unmount/mount leaves exactly one registration of each name.
 */
function useStoreTools(facade: StoreFacade, debug: StoreDemoDebug, delayMs: number): RegistrationStatus {
  const [status, setStatus] = useState<RegistrationStatus>({ state: 'pending' });
  useEffect(() => {
    const modelContext = document.modelContext;
    if (!modelContext) {
      setStatus({ state: 'unavailable' });
      return;
    }
    const controller = new AbortController();
    debug.effectRuns++;
    const tools = storeTools(facade, { delayMs });
    Promise.all(tools.map((tool) => modelContext.registerTool(tool, { signal: controller.signal }))).then(
      () => {
        if (!controller.signal.aborted) setStatus({ state: 'registered', count: tools.length });
      },
      (error: unknown) => {
        if (controller.signal.aborted) return; // superseded by the cleanup: not a failure
        const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        console.error('store demo: tool registration failed:', message);
        setStatus({ state: 'error', message });
      },
    );
    return () => {
      debug.cleanups++;
      controller.abort();
    };
  }, [facade, debug, delayMs]);
  return status;
}

function money(cents: number): string {
  return `${(cents / 100).toFixed(2)} ${CURRENCY}`;
}

export function App({ facade, debug, delayMs }: { facade: StoreFacade; debug: StoreDemoDebug; delayMs: number }) {
  const state = useSyncExternalStore(facade.subscribe, facade.getSnapshot);
  const activity = useSyncExternalStore(facade.subscribe, facade.getActivity);
  const status = useStoreTools(facade, debug, delayMs);
  const cart = cartView(state);

  // The commit point: the DOM now shows `state.revision`; agent calls waiting for it return.
  useLayoutEffect(() => {
    facade.markCommitted(state.revision);
  }, [facade, state.revision]);

  useEffect(() => {
    document.documentElement.dataset.ready = String(status.state === 'registered');
  }, [status]);

  return (
    <main data-testid="store" data-revision={state.revision}>
      <header>
        <h1>Echo demo shop</h1>
        <p>
          Cart revision <output data-testid="revision">{state.revision}</output> · total{' '}
          <output data-testid="cart-total" data-total-cents={cart.totalCents}>{money(cart.totalCents)}</output>
        </p>
        <p
          data-testid="webmcp-status"
          data-state={status.state}
          data-tool-count={status.state === 'registered' ? status.count : 0}
          data-replays={facade.replays}
        >
          WebMCP:{' '}
          {status.state === 'registered'
            ? `${status.count} tools registered`
            : status.state === 'unavailable'
              ? 'document.modelContext is not available (start Chromium with --enable-features=WebMCPTesting)'
              : status.state === 'error'
                ? `registration failed: ${status.message}`
                : 'registering…'}
        </p>
      </header>
      <ul className="products">
        {PRODUCTS.map((p) => {
          const quantity = state.quantities[p.id] ?? 0;
          return (
            <li key={p.id} data-testid={`product-${p.id}`} data-quantity={quantity}>
              <span className="name">{p.name}</span>
              <span className="price">{money(p.priceCents)}</span>
              <button type="button" data-testid={`decrement-${p.id}`} aria-label={`One fewer ${p.name}`} disabled={quantity <= 0}
                onClick={() => facade.dispatchHuman({ kind: 'set_quantity', productId: p.id, quantity: quantity - 1 })}>
                −
              </button>
              <output data-testid={`quantity-${p.id}`} aria-label={`${p.name} in cart`}>{quantity}</output>
              <button type="button" data-testid={`increment-${p.id}`} aria-label={`One more ${p.name}`} disabled={quantity >= MAX_QUANTITY}
                onClick={() => facade.dispatchHuman({ kind: 'add', productId: p.id, quantity: 1 })}>
                +
              </button>
            </li>
          );
        })}
      </ul>
      <section>
        <h2>Activity</h2>
        <ol data-testid="activity" reversed>
          {activity.map((a) => (
            <li key={a.seq} data-actor={a.actor} data-revision={a.revision}>
              {a.actor === 'agent' ? 'Agent' : 'You'}: {a.text} (revision {a.revision})
            </li>
          ))}
        </ol>
      </section>
    </main>
  );
}
