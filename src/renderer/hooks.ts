/** Small React hooks shared by the views. */
import { useEffect, useState } from 'react';

/** The current time (ms), refreshed every `periodMs`. */
export function useNow(periodMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), periodMs);
    return () => clearInterval(t);
  }, [periodMs]);
  return now;
}
