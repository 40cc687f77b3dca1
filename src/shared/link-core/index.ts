/**
 * The link core both peers share (issue 7 item 6): the handshake as pure
 * transition functions per role, the crypto they request, the runner that
 * drives them, the request multiplexer, the heartbeat, and the plain-words
 * problems. The console's bridge and the extension's link are adapters over it.
 */
export * from './handshake';
export * from './crypto';
export * from './runner';
export * from './mux';
export * from './heartbeat';
export * from './problems';
