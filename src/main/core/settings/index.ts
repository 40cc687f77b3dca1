/**
 * The console's configuration in its data dir: `settings.json`, mode 0600 in a
 * 0700 folder, written atomically (temp file + rename). It holds the MCP port,
 * the bearer token (made at first run: 32 random bytes, base64url), the
 * approval timeout, developer mode, local policy rules, and — while the console
 * runs — the live endpoint URL, which the stdio command (bin/echo-console-mcp.mjs)
 * reads to find the running console.
 *
 * A file that exists but does not parse or validate is never overwritten: the
 * store refuses to open (SettingsError names the file), because silently
 * replacing it would rotate the token and drop the person's rules.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { APPROVAL_TIMEOUT_RANGE, LIMITS } from '../../../shared/limits';
import { POLICY_RULES_SCHEMA, policyRuleProblem, type PolicyRule } from '../policy';

/** The port the MCP endpoint listens on unless configured (127.0.0.1 only). */
export const DEFAULT_MCP_PORT = 47_821;

/** Bounds on the approval timeout (ms), from src/shared/limits.ts. */
export { APPROVAL_TIMEOUT_RANGE };

export const SETTINGS_FILE = 'settings.json';

/** What settings.json holds (version 1). */
export interface Settings {
  version: 1;
  /** TCP port on 127.0.0.1; 0 picks a free one at each start. */
  mcpPort: number;
  /** The MCP bearer token: 32 random bytes, base64url (43 characters). */
  token: string;
  /** How long an approval request waits for the person (ms). */
  approvalTimeoutMs: number;
  developerMode: boolean;
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
  required: ['version', 'mcpPort', 'token', 'approvalTimeoutMs', 'developerMode'],
  properties: {
    version: { const: 1 },
    mcpPort: { type: 'integer', minimum: 0, maximum: 65535 },
    token: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' },
    approvalTimeoutMs: { type: 'integer', minimum: APPROVAL_TIMEOUT_RANGE.min, maximum: APPROVAL_TIMEOUT_RANGE.max },
    developerMode: { type: 'boolean' },
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

/** A fresh bearer token: 32 random bytes as base64url without padding (43 characters). */
export function generateToken(): string {
  return randomBytes(32).toString('base64url');
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
        token: generateToken(),
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
    const p = parsed as Partial<Settings> & Omit<Settings, 'policyRules' | 'endpoint'>;
    // A rule that can never match (an origin spelt otherwise than URL.origin) would be a silent hole for a deny rule.
    const bad = (p.policyRules ?? []).map((r, i) => [i, policyRuleProblem(r)] as const).find(([, why]) => why !== null);
    if (bad) throw new SettingsError(`${file} is not valid settings: /policyRules/${bad[0]} ${bad[1]}`);
    const store = new SettingsStore(file, { ...p, policyRules: p.policyRules ?? [], endpoint: p.endpoint ?? null });
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

  /** Apply a patch (already validated by the caller) and persist it. */
  update(patch: Partial<Omit<Settings, 'version' | 'token'>>): Settings {
    this.current = { ...this.current, ...structuredClone(patch) };
    this.persist();
    return this.get();
  }

  /** Make and store a new token; the old one is gone at once. */
  rotateToken(): string {
    this.current = { ...this.current, token: generateToken() };
    this.persist();
    return this.current.token;
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
