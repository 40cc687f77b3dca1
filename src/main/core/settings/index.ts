/**
 * The console's configuration in its data dir: `settings.json`, mode 0600 in a
 * 0700 folder, written atomically (temp file + rename). It holds the MCP port,
 * the agents' tokens (`agentTokens`: one per agent, named by the person, each
 * stored as the SHA-256 of its secret, never the secret; issue 9 item 2), the
 * approval timeout, developer mode, local policy rules, and — while the console
 * runs — the live endpoint URL (shown to the person; the stdio command does not
 * use it: it reaches the console over the private agent socket).
 *
 * Migration: a file from before per-agent tokens holds one plaintext `token`.
 * It becomes the token named "default" (its hash; the plaintext is dropped from
 * the file), so an agent configured with it keeps working.
 *
 * A file that exists but does not parse or validate is never overwritten: the
 * store refuses to open (SettingsError names the file), because silently
 * replacing it would rotate the token and drop the person's rules.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { APPROVAL_TIMEOUT_RANGE, DEVELOPER_MODE_IDLE_MINUTES, LIMITS } from '../../../shared/limits';
import { RETENTION_DAYS } from '../../../shared/ledger-export';
import { POLICY_RULES_SCHEMA, policyRuleProblem, type PolicyRule } from '../policy';

/** The port the MCP endpoint listens on unless configured (127.0.0.1 only). */
export const DEFAULT_MCP_PORT = 47_821;

/** Bounds on the approval timeout (ms), from src/shared/limits.ts. */
export { APPROVAL_TIMEOUT_RANGE };

export const SETTINGS_FILE = 'settings.json';

/**
 * One agent's token as stored: never the secret, only its SHA-256 (lowercase hex).
 * `id` is stable for the token's life (receipts, and per-token limits, key on it);
 * `name` is the person's name for the agent, unique among the tokens (case-insensitive).
 */
export interface StoredAgentToken {
  /** `tok_` + 16 lowercase hex (random), or `default` for the migrated single token. */
  id: string;
  /** 1 to AGENT_TOKEN_NAME_MAX printable characters, chosen by the person. */
  name: string;
  /** SHA-256 of the secret's UTF-8 bytes, 64 lowercase hex. */
  sha256: string;
  /** ms since the epoch. */
  createdAt: number;
}

/** Longest token name (characters). */
export const AGENT_TOKEN_NAME_MAX = 64;
/** At most this many agent tokens (each is one named agent). */
export const MAX_AGENT_TOKENS = 32;

/** What settings.json holds (version 1). */
export interface Settings {
  version: 1;
  /** TCP port on 127.0.0.1; 0 picks a free one at each start. */
  mcpPort: number;
  /** The agents' tokens, hashed (see StoredAgentToken). Empty until the person creates one. */
  agentTokens: StoredAgentToken[];
  /** How long an approval request waits for the person (ms). */
  approvalTimeoutMs: number;
  /**
   * Never true on disk: developer mode is not persisted (issue 11 item 2;
   * src/main/core/developer-mode.ts). Kept, always `false`, so older consoles
   * still read the file; a `true` written by one is read as off.
   */
  developerMode: false;
  /** Minutes without the person's input or a raw-JavaScript call before developer mode switches itself off (default 30). */
  developerModeIdleMinutes?: number;
  /** Retention of receipts' payloads in days (RETENTION_DAYS); absent or null: kept forever (docs/ledger.md, "Retention"). */
  retentionDays?: number | null;
  /**
   * The person's policy rules (src/shared/policy.ts), edited in the console's
   * policy editor (src/main/core/api/policy.ts) or by hand while the console is stopped.
   */
  policyRules: PolicyRule[];
  /** Set while the console runs; the stdio command connects here. */
  endpoint: { url: string; pid: number; startedAt: number } | null;
}

export class SettingsError extends Error {
  readonly code = 'settings-invalid';
}

const SETTINGS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['version', 'mcpPort', 'approvalTimeoutMs', 'developerMode'],
  properties: {
    version: { const: 1 },
    mcpPort: { type: 'integer', minimum: 0, maximum: 65535 },
    /** Before per-agent tokens: the one plaintext token, migrated to "default" at open. */
    token: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' },
    agentTokens: {
      type: 'array',
      maxItems: MAX_AGENT_TOKENS,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'name', 'sha256', 'createdAt'],
        properties: {
          id: { type: 'string', pattern: '^(default|tok_[0-9a-f]{16})$' },
          name: { type: 'string', minLength: 1, maxLength: AGENT_TOKEN_NAME_MAX },
          sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
          createdAt: { type: 'number' },
        },
      },
    },
    approvalTimeoutMs: { type: 'integer', minimum: APPROVAL_TIMEOUT_RANGE.min, maximum: APPROVAL_TIMEOUT_RANGE.max },
    developerMode: { type: 'boolean' },
    developerModeIdleMinutes: { type: 'integer', minimum: DEVELOPER_MODE_IDLE_MINUTES.min, maximum: DEVELOPER_MODE_IDLE_MINUTES.max },
    retentionDays: { anyOf: [{ type: 'null' }, { type: 'integer', minimum: RETENTION_DAYS.min, maximum: RETENTION_DAYS.max }] },
    policyRules: POLICY_RULES_SCHEMA,
    endpoint: {
      anyOf: [
        { type: 'null' },
        {
          type: 'object',
          additionalProperties: false,
          required: ['url', 'pid', 'startedAt'],
          properties: { url: { type: 'string', maxLength: 200 }, pid: { type: 'integer' }, startedAt: { type: 'number' } },
        },
      ],
    },
  },
} as const;

const validateSettings = new Ajv({ strict: true, allErrors: true }).compile(SETTINGS_SCHEMA);

/** A fresh bearer token secret: 32 random bytes as base64url without padding (43 characters). */
export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

/** SHA-256 of a token secret's UTF-8 bytes, lowercase hex: what settings.json keeps. */
export function hashToken(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/**
 * Why `name` cannot name an agent token, or null when it can: 1 to AGENT_TOKEN_NAME_MAX
 * characters after trimming, no control, format (bidi, zero-width), or line characters,
 * so the name the dialog shows is the name the person typed. Uniqueness is checked by the store.
 */
export function agentTokenNameProblem(name: string): string | null {
  const t = name.trim();
  if (t.length === 0) return 'the name is empty';
  if (t.length > AGENT_TOKEN_NAME_MAX) return `the name is longer than ${AGENT_TOKEN_NAME_MAX} characters`;
  if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}]/u.test(t)) return 'the name holds control, invisible or unassigned characters';
  return null;
}

/** A token-store refusal: `code` is `token-name-invalid`, `token-name-taken`, `too-many-tokens` or `token-not-found`. */
export class AgentTokenError extends Error {
  constructor(
    readonly code: 'token-name-invalid' | 'token-name-taken' | 'too-many-tokens' | 'token-not-found',
    message: string,
  ) {
    super(message);
  }
}

/** Loads, validates and persists settings.json. Every getter returns a copy. */
export class SettingsStore {
  readonly file: string;
  private current: Settings;

  private constructor(file: string, s: Settings) {
    this.file = file;
    this.current = s;
  }

  /**
   * Open (or create, with a fresh token) `<dataDir>/settings.json`.
   * @param defaults used only when the file does not exist yet.
   * @throws SettingsError when the file exists but is not valid settings.
   */
  static open(dataDir: string, defaults: Partial<Pick<Settings, 'mcpPort' | 'approvalTimeoutMs'>> = {}): SettingsStore {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const file = join(dataDir, SETTINGS_FILE);
    if (!existsSync(file)) {
      const s: Settings = {
        version: 1,
        mcpPort: defaults.mcpPort ?? DEFAULT_MCP_PORT,
        agentTokens: [],
        approvalTimeoutMs: defaults.approvalTimeoutMs ?? LIMITS.approvalTimeoutMs,
        developerMode: false,
        policyRules: [],
        endpoint: null,
      };
      const store = new SettingsStore(file, s);
      store.persist();
      return store;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (e) {
      throw new SettingsError(`${file} is not valid JSON (${e instanceof Error ? e.message : String(e)}); fix or remove it (removing it makes a new token).`);
    }
    if (!validateSettings(parsed)) {
      const why = (validateSettings.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message}`).join('; ');
      throw new SettingsError(`${file} is not valid settings: ${why}`);
    }
    const p = parsed as Partial<Settings> & Omit<Settings, 'policyRules' | 'endpoint' | 'agentTokens'> & { token?: string };
    // A rule that can never match (an origin spelt otherwise than URL.origin) would be a silent hole for a deny rule.
    const bad = (p.policyRules ?? []).map((r, i) => [i, policyRuleProblem(r)] as const).find(([, why]) => why !== null);
    if (bad) throw new SettingsError(`${file} is not valid settings: /policyRules/${bad[0]} ${bad[1]}`);
    const { token: legacy, ...rest } = p;
    const agentTokens = [...(p.agentTokens ?? [])];
    // Migration from the single plaintext token: it becomes "default" (hashed), so an agent that holds it keeps working.
    const migrate = legacy !== undefined && !agentTokens.some((t) => t.id === 'default');
    if (migrate && agentTokens.length < MAX_AGENT_TOKENS) {
      const name = agentTokens.some((t) => t.name.toLowerCase() === 'default') ? 'default (migrated)' : 'default';
      agentTokens.unshift({ id: 'default', name, sha256: hashToken(legacy), createdAt: Date.now() });
    }
    // Developer mode is never persisted: an older console's `true` is read as off, and written back so.
    const store = new SettingsStore(file, { ...rest, developerMode: false, agentTokens, policyRules: p.policyRules ?? [], endpoint: p.endpoint ?? null });
    if (legacy !== undefined || p.developerMode !== false) store.persist(); // the plaintext leaves the file now; so does a stale "on"
    // Tighten the mode if someone loosened it: the file holds the bearer token.
    try {
      chmodSync(file, 0o600);
    } catch {
      /* not fatal (e.g. Windows) */
    }
    return store;
  }

  get(): Settings {
    return structuredClone(this.current);
  }

  /** Apply a patch (already validated by the caller) and persist it. Tokens change only through createAgentToken / revokeAgentToken. */
  update(patch: Partial<Omit<Settings, 'version' | 'agentTokens' | 'developerMode'>>): Settings {
    // Tokens change only through their own calls; developer mode is never written (DeveloperMode holds it).
    const { agentTokens: _ignored, developerMode: _notPersisted, ...rest } = structuredClone(patch) as Partial<Settings>;
    void _ignored;
    void _notPersisted;
    this.current = { ...this.current, ...rest };
    this.persist();
    return this.get();
  }

  /**
   * Make a new agent token named `name` (trimmed) and store its hash. The secret is
   * returned once, here, and kept nowhere.
   * @throws AgentTokenError `token-name-invalid` (agentTokenNameProblem), `token-name-taken`
   *   (another token has this name, case-insensitive), `too-many-tokens` (MAX_AGENT_TOKENS).
   */
  createAgentToken(name: string): { token: StoredAgentToken; secret: string } {
    const problem = agentTokenNameProblem(name);
    if (problem) throw new AgentTokenError('token-name-invalid', `Cannot name a token ${JSON.stringify(name.slice(0, 80))}: ${problem}.`);
    const clean = name.trim();
    if (this.current.agentTokens.some((t) => t.name.toLowerCase() === clean.toLowerCase())) {
      throw new AgentTokenError('token-name-taken', `A token named ${JSON.stringify(clean)} exists already: each agent's name must be its own.`);
    }
    if (this.current.agentTokens.length >= MAX_AGENT_TOKENS) {
      throw new AgentTokenError('too-many-tokens', `At most ${MAX_AGENT_TOKENS} agent tokens; revoke one first.`);
    }
    const secret = generateToken();
    const token: StoredAgentToken = { id: `tok_${randomBytes(8).toString('hex')}`, name: clean, sha256: hashToken(secret), createdAt: Date.now() };
    this.current = { ...this.current, agentTokens: [...this.current.agentTokens, token] };
    this.persist();
    return { token: { ...token }, secret };
  }

  /**
   * Remove the token `id`: from now on its secret matches nothing.
   * @throws AgentTokenError `token-not-found`.
   */
  revokeAgentToken(id: string): StoredAgentToken {
    const found = this.current.agentTokens.find((t) => t.id === id);
    if (!found) throw new AgentTokenError('token-not-found', `No agent token ${JSON.stringify(id.slice(0, 40))}: it may have been revoked already.`);
    this.current = { ...this.current, agentTokens: this.current.agentTokens.filter((t) => t.id !== id) };
    this.persist();
    return { ...found };
  }

  /**
   * The stored token whose secret is `secret`, or null. Compares SHA-256 digests in
   * constant time against every token, so timing says nothing about which (or whether one) matched.
   */
  findAgentToken(secret: string): StoredAgentToken | null {
    const given = createHash('sha256').update(secret, 'utf8').digest();
    let match: StoredAgentToken | null = null;
    for (const t of this.current.agentTokens) {
      if (timingSafeEqual(given, Buffer.from(t.sha256, 'hex')) && match === null) match = t;
    }
    return match ? { ...match } : null;
  }

  private persist(): void {
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(this.current, null, 2)}\n`, { mode: 0o600 });
    try {
      chmodSync(tmp, 0o600);
    } catch {
      /* not fatal on Windows */
    }
    renameSync(tmp, this.file);
  }
}
