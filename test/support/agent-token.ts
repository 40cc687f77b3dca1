/**
 * Tests get an agent token the way the person does: `createAgentToken` on the console
 * API (Connection → Agent tokens → Create), whose answer is the only place a secret
 * appears (issue 9 item 2). Each call makes a new, uniquely named token.
 */
import type { ConsoleApi } from '../../src/shared/ipc';

let counter = 0;

/**
 * Create a token named `name` (default: a fresh "test agent N") and answer its secret.
 * @throws Error when the console refuses (the refusal's code and message).
 */
export async function createAgentToken(api: Pick<ConsoleApi, 'createAgentToken'>, name = `test agent ${++counter}`): Promise<string> {
  const r = await api.createAgentToken({ name });
  if (!r.ok) throw new Error(`createAgentToken refused: ${r.error.code}: ${r.error.message}`);
  return r.value.secret;
}

/** Like createAgentToken, but answers the token's id and name too. */
export async function createAgentTokenInfo(api: Pick<ConsoleApi, 'createAgentToken'>, name = `test agent ${++counter}`): Promise<{ id: string; name: string; secret: string }> {
  const r = await api.createAgentToken({ name });
  if (!r.ok) throw new Error(`createAgentToken refused: ${r.error.code}: ${r.error.message}`);
  return { id: r.value.token.id, name: r.value.token.name, secret: r.value.secret };
}
