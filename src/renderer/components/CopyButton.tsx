/**
 * Copy a value to the clipboard. The Electron host denies every permission,
 * `clipboard-sanitized-write` included, so when `navigator.clipboard` refuses
 * we fall back to selecting a hidden textarea and `execCommand('copy')`, which
 * works inside the click's user gesture without a permission.
 */
import { useState } from 'react';

async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const ta = document.createElement('textarea');
    ta.value = text;
    ta.setAttribute('readonly', '');
    ta.style.position = 'fixed';
    ta.style.opacity = '0';
    document.body.appendChild(ta);
    ta.select();
    let done = false;
    try {
      done = document.execCommand('copy');
    } catch {
      done = false;
    }
    ta.remove();
    return done;
  }
}

export function CopyButton(props: { value: string; label?: string; testId?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  return (
    <button
      type="button"
      className="btn btn-small"
      data-testid={props.testId}
      onClick={async () => {
        setState((await copyText(props.value)) ? 'copied' : 'failed');
        setTimeout(() => setState('idle'), 1500);
      }}
    >
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed' : (props.label ?? 'Copy')}
    </button>
  );
}
