/**
 * The store's WebMCP tools. Each one reads the latest snapshot through the
 * facade, applies at most ONE command and returns plain JSON. The browser does
 * not validate arguments against `inputSchema` (docs/browser-facts.md,
 * "WebMCP: running tools"), so the page checks
 * them itself and answers `invalid_arguments` instead of guessing.
 */
import { CURRENCY, MAX_QUANTITY, PRODUCT_IDS, PRODUCTS, cartView, type Command } from './domain';
import type { AgentOutcome, StoreFacade } from './facade';

export const STORE_TOOL_NAMES = ['list_products', 'get_cart', 'set_cart_quantity', 'add_to_cart'] as const;

const productIdSchema = { type: 'string', enum: [...PRODUCT_IDS], description: 'A product id from list_products.' };
const expectedRevisionSchema = {
  type: 'integer',
  minimum: 0,
  description: 'The cart revision you based this change on (from get_cart). If the cart has changed since, nothing is applied and the result is a revision_mismatch error.',
};
const operationIdSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 128,
  pattern: '^[A-Za-z0-9_.:-]+$',
  description: 'Idempotency key. Retrying with the same operationId returns the first committed result without applying the change twice.',
};

type Args = Record<string, unknown>;
type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

function parseCommonOptions(args: Args): Parsed<{ expectedRevision?: number; operationId?: string }> {
  const { expectedRevision, operationId } = args;
  if (expectedRevision !== undefined && (typeof expectedRevision !== 'number' || !Number.isInteger(expectedRevision) || expectedRevision < 0)) {
    return { ok: false, message: 'expectedRevision must be a non-negative integer.' };
  }
  if (operationId !== undefined && (typeof operationId !== 'string' || !/^[A-Za-z0-9_.:-]{1,128}$/.test(operationId))) {
    return { ok: false, message: 'operationId must be 1-128 characters of A-Z a-z 0-9 _ . : -' };
  }
  return { ok: true, value: { expectedRevision: expectedRevision as number | undefined, operationId: operationId as string | undefined } };
}

function parseQuantity(value: unknown, min: number): Parsed<number> {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > MAX_QUANTITY) {
    return { ok: false, message: `quantity must be an integer from ${min} to ${MAX_QUANTITY}.` };
  }
  return { ok: true, value };
}

function checkKeys(args: Args, allowed: readonly string[]): string | null {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return 'arguments must be an object.';
  const extra = Object.keys(args).filter((k) => !allowed.includes(k));
  return extra.length ? `unknown argument(s): ${extra.join(', ')}.` : null;
}

async function mutate(facade: StoreFacade, args: Args, allowed: readonly string[], build: (args: Args) => Parsed<Command>, delayMs: number): Promise<AgentOutcome> {
  const keyProblem = checkKeys(args, allowed);
  if (keyProblem) return facade.refusal('invalid_arguments', keyProblem);
  const command = build(args);
  if (!command.ok) return facade.refusal('invalid_arguments', command.message);
  const options = parseCommonOptions(args);
  if (!options.ok) return facade.refusal('invalid_arguments', options.message);
  const outcome = await facade.runAgentCommand(command.value, options.value);
  if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
  return outcome;
}

/** Definitions for `document.modelContext.registerTool`, bound to one facade. */
export function storeTools(facade: StoreFacade, opts: { delayMs?: number } = {}): WebMcpToolDefinition[] {
  const delayMs = opts.delayMs ?? 0;
  return [
    {
      name: 'list_products',
      title: 'List products',
      description: 'Lists the products of the Echo demo shop with their ids and prices (in cents).',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      annotations: { readOnlyHint: true },
      execute: () => ({ products: PRODUCTS.map((p) => ({ ...p, currency: CURRENCY })) }),
    },
    {
      name: 'get_cart',
      title: 'Get cart',
      description: 'Returns the cart with its current revision. Pass that revision as expectedRevision when you change the cart.',
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      annotations: { readOnlyHint: true },
      execute: () => cartView(facade.getSnapshot()),
    },
    {
      name: 'set_cart_quantity',
      title: 'Set cart quantity',
      description: 'Sets the quantity of one product in the cart (0 removes it). Returns the committed cart revision.',
      inputSchema: {
        type: 'object',
        properties: {
          productId: productIdSchema,
          quantity: { type: 'integer', minimum: 0, maximum: MAX_QUANTITY, description: 'The new quantity; 0 removes the product.' },
          expectedRevision: expectedRevisionSchema,
          operationId: operationIdSchema,
        },
        required: ['productId', 'quantity'],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: false },
      execute: (args) =>
        mutate(facade, args, ['productId', 'quantity', 'expectedRevision', 'operationId'], (a) => {
          if (typeof a.productId !== 'string') return { ok: false, message: 'productId must be a string.' };
          const q = parseQuantity(a.quantity, 0);
          return q.ok ? { ok: true, value: { kind: 'set_quantity', productId: a.productId, quantity: q.value } } : q;
        }, delayMs),
    },
    {
      name: 'add_to_cart',
      title: 'Add to cart',
      description: 'Adds a quantity (default 1) of one product to the cart. Returns the committed cart revision.',
      inputSchema: {
        type: 'object',
        properties: {
          productId: productIdSchema,
          quantity: { type: 'integer', minimum: 1, maximum: MAX_QUANTITY, default: 1, description: 'How many to add.' },
          expectedRevision: expectedRevisionSchema,
          operationId: operationIdSchema,
        },
        required: ['productId'],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: false },
      execute: (args) =>
        mutate(facade, args, ['productId', 'quantity', 'expectedRevision', 'operationId'], (a) => {
          if (typeof a.productId !== 'string') return { ok: false, message: 'productId must be a string.' };
          const q = parseQuantity(a.quantity ?? 1, 1);
          return q.ok ? { ok: true, value: { kind: 'add', productId: a.productId, quantity: q.value } } : q;
        }, delayMs),
    },
  ];
}
