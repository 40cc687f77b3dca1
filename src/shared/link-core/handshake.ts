/**
 * The link handshake as two pure transition functions, one per role:
 *
 *   consoleStep(state, input, env)   → { state, send[], effects[] }
 *   extensionStep(state, input, env) → { state, send[], effects[] }
 *
 * Inputs are everything that can happen: a message received (raw, validated
 * here), a timer that expired, the person's answer, the result of a crypto
 * request, the result of storing the key, or the transport dropping. Nothing
 * here does I/O, reads a clock or draws randomness:
 *   - crypto is requested by an effect `{kind:'crypto', req}` and its result
 *     (with any fresh nonces and key pairs) comes back as `{kind:'crypto', result}`
 *     (crypto.ts, which calls pairing-crypto.ts);
 *   - storing the pairing key is the effect `store`, answered by `{kind:'stored'}`;
 *   - a fresh pairing id and the time come in the person's `confirm` input.
 * The adapters (src/main/core/bridge for the socket, extension/src/background/link.ts
 * for the chrome.runtime Port) feed inputs one at a time through `StepRunner`
 * (runner.ts), which sends `send[]` first, then performs `effects[]` in order.
 * A test can drive both roles against each other in memory
 * (test/unit/link-core-handshake.test.ts).
 *
 * The two roles live in handshake-console.ts and handshake-extension.ts, what
 * they share in handshake-types.ts; this module re-exports all three, so
 * importers see one handshake.
 *
 * What is checked, and in which order, is docs/link.md "Message sequence" and
 * "Pairing crypto": protocol version first, then the message's shape; the
 * console proves first; the extension never sends its proof unless the
 * console's verified; a key already held is replaced only with the person's
 * word in the popup too.
 */
export * from './handshake-types';
export * from './handshake-console';
export * from './handshake-extension';
