/**
 * The console's stores as React context, and the hooks every container uses (App.tsx,
 * audit-pages.tsx): the stores, and whether the console answers.
 */
import { createContext, useContext } from 'react';
import { useStore } from 'zustand';
import { consoleReachable } from './stores/connection';
import type { ConsoleStores } from './stores';

export const StoresContext = createContext<ConsoleStores | null>(null);

export function useStores(): ConsoleStores {
  const s = useContext(StoresContext);
  if (!s) throw new Error('StoresContext is missing');
  return s;
}

/** Whether the console answers (an open transport); false while connecting, reconnecting or refused. */
export function useOnline(): boolean {
  const { connection } = useStores();
  return useStore(connection, (s) => consoleReachable(s.transport));
}
