/**
 * The shop's domain: products, cart state and the two commands that change it.
 * Pure functions only; the facade (facade.ts) owns time, React and WebMCP.
 */

export interface Product {
  readonly id: string;
  readonly name: string;
  readonly priceCents: number;
}

export const CURRENCY = 'EUR';
export const MAX_QUANTITY = 99;

export const PRODUCTS: readonly Product[] = [
  { id: 'mug', name: 'Echo mug', priceCents: 1200 },
  { id: 'tee', name: 'Console T-shirt', priceCents: 2500 },
  { id: 'stickers', name: 'Sticker pack', priceCents: 400 },
  { id: 'notebook', name: 'Grid notebook', priceCents: 900 },
];

export const PRODUCT_IDS: readonly string[] = PRODUCTS.map((p) => p.id);

/** One immutable snapshot; every applied command makes a new one with `revision + 1`. */
export interface StoreState {
  readonly revision: number;
  readonly quantities: Readonly<Record<string, number>>;
}

export type Command =
  | { readonly kind: 'set_quantity'; readonly productId: string; readonly quantity: number }
  | { readonly kind: 'add'; readonly productId: string; readonly quantity: number };

export type Actor = 'agent' | 'human';

export type ApplyResult =
  | { readonly ok: true; readonly state: StoreState }
  | { readonly ok: false; readonly error: 'unknown_product' | 'quantity_out_of_range'; readonly message: string };

export function initialState(): StoreState {
  return { revision: 0, quantities: Object.fromEntries(PRODUCTS.map((p) => [p.id, 0])) };
}

export function findProduct(productId: string): Product | undefined {
  return PRODUCTS.find((p) => p.id === productId);
}

/** Applies ONE command to a snapshot. Never mutates its input. */
export function applyCommand(state: StoreState, command: Command): ApplyResult {
  if (!findProduct(command.productId)) {
    return { ok: false, error: 'unknown_product', message: `No product with id "${command.productId}".` };
  }
  const current = state.quantities[command.productId] ?? 0;
  const next = command.kind === 'set_quantity' ? command.quantity : current + command.quantity;
  if (!Number.isInteger(next) || next < 0 || next > MAX_QUANTITY) {
    return { ok: false, error: 'quantity_out_of_range', message: `Quantity must be an integer from 0 to ${MAX_QUANTITY}; this command would make it ${next}.` };
  }
  return {
    ok: true,
    state: { revision: state.revision + 1, quantities: { ...state.quantities, [command.productId]: next } },
  };
}

export interface CartLine {
  readonly productId: string;
  readonly name: string;
  readonly quantity: number;
  readonly unitPriceCents: number;
  readonly lineTotalCents: number;
}

export interface CartView {
  readonly revision: number;
  readonly items: readonly CartLine[];
  readonly totalCents: number;
  readonly currency: string;
}

export function cartView(state: StoreState): CartView {
  const items = PRODUCTS.filter((p) => (state.quantities[p.id] ?? 0) > 0).map((p) => {
    const quantity = state.quantities[p.id] ?? 0;
    return { productId: p.id, name: p.name, quantity, unitPriceCents: p.priceCents, lineTotalCents: quantity * p.priceCents };
  });
  return { revision: state.revision, items, totalCents: items.reduce((s, l) => s + l.lineTotalCents, 0), currency: CURRENCY };
}

/** Same command, same fingerprint: used to tell an idempotent retry from a reused operationId. */
export function commandFingerprint(command: Command): string {
  return `${command.kind}|${command.productId}|${command.quantity}`;
}
