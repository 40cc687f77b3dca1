/**
 * Where the console keeps the pairing key. The bridge sees only the small
 * `SecretStore` interface; the Electron host supplies one backed by
 * `safeStorage` (OS keychain), and `FileSecretStore` is the plain-Node default:
 * a 0600 JSON file in a 0700 folder of the console's data dir.
 *
 * Fails closed (docs/design.md, "Conventions" §5): an unreadable or corrupt file, or one that
 * other users could read, yields "no secret" (the extension must pair again),
 * never a guessed or possibly copied key.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';

/** A tiny store of named secrets (strings of a few hundred bytes). */
export interface SecretStore {
  /** The secret, or null when absent or unusable. */
  get(name: string): Promise<string | null>;
  set(name: string, value: string): Promise<void>;
  /** Remove the secret; no error when it is absent. */
  delete(name: string): Promise<void>;
}

/** An in-memory store, for tests and for a console that must not persist pairings. */
export class MemorySecretStore implements SecretStore {
  private readonly map = new Map<string, string>();
  async get(name: string): Promise<string | null> {
    return this.map.get(name) ?? null;
  }
  async set(name: string, value: string): Promise<void> {
    this.map.set(name, value);
  }
  async delete(name: string): Promise<void> {
    this.map.delete(name);
  }
}

/**
 * A JSON file `{name: value}` with mode 0600 in a folder with mode 0700.
 * Writes are atomic (temporary file, then rename). On Windows the modes are
 * not enforced by the OS; the file lives in the user's profile, which only the
 * user (and administrators) can read.
 */
export class FileSecretStore implements SecretStore {
  constructor(
    private readonly filePath: string,
    private readonly onWarning: (message: string) => void = () => {},
  ) {}

  private async readAll(): Promise<Record<string, string>> {
    let raw: string;
    try {
      if (process.platform !== 'win32') {
        const st = await fs.stat(this.filePath);
        if ((st.mode & 0o077) !== 0) {
          this.onWarning(`${this.filePath} is readable by other users (mode ${(st.mode & 0o777).toString(8)}); its secrets are ignored`);
          return {};
        }
      }
      raw = await fs.readFile(this.filePath, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') this.onWarning(`cannot read ${this.filePath}: ${(e as Error).message}`);
      return {};
    }
    try {
      const parsed: unknown = JSON.parse(raw);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string') out[k] = v;
      return out;
    } catch (e) {
      this.onWarning(`${this.filePath} is corrupt (${(e as Error).message}); its secrets are ignored`);
      return {};
    }
  }

  private async writeAll(all: Record<string, string>): Promise<void> {
    const dir = path.dirname(this.filePath);
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.filePath}.${process.pid}.${Date.now()}.tmp`;
    await fs.writeFile(tmp, JSON.stringify(all), { mode: 0o600 });
    await fs.chmod(tmp, 0o600); // umask cannot widen, but an existing file keeps its mode
    await fs.rename(tmp, this.filePath);
  }

  async get(name: string): Promise<string | null> {
    return (await this.readAll())[name] ?? null;
  }
  async set(name: string, value: string): Promise<void> {
    const all = await this.readAll();
    all[name] = value;
    await this.writeAll(all);
  }
  async delete(name: string): Promise<void> {
    const all = await this.readAll();
    if (!(name in all)) return;
    delete all[name];
    await this.writeAll(all);
  }
}
