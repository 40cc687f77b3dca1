/**
 * Child process for test/unit/ledger-sqlite.test.ts: pretends to be Electron's
 * main process (sets process.versions.electron to argv[3]) and opens a database
 * through openDatabase, printing one JSON line: {ok, nativeBinding?} or {ok:false, code, message}.
 * The Electron-ABI folder comes from $ECHO_ELECTRON_ABI_DIR.
 */
Object.defineProperty(process.versions, 'electron', { value: process.argv[3], enumerable: true, configurable: true });
export {};
const { openDatabase } = await import('../../../src/main/core/ledger/sqlite');
try {
  const db = openDatabase(process.argv[2] as string);
  const v = db.prepare('SELECT sqlite_version() AS v').get() as { v: string };
  db.close();
  process.stdout.write(JSON.stringify({ ok: true, sqlite: v.v }) + '\n');
} catch (e) {
  process.stdout.write(JSON.stringify({ ok: false, code: (e as { code?: string }).code, message: (e as Error).message }) + '\n');
}
