/**
 * The shop's messages: a React list KEYED BY INDEX (`key={i}`), a common mistake in real apps, and
 * no WebMCP tool (the semantic controls' page_click and page_type; docs/semantic-controls.md, "The
 * target's item"). When a message arrives at the top, React keeps every row's elements and gives
 * them the next message: the first row's "Delete" button is the same element, with the same role,
 * name and position, but it now deletes the new message. Only the row's text tells.
 *
 * Layouts (`?layout=`):
 *  - `rows` (default): `<div>` rows with no role, the actions in their own bar (Archive, Delete);
 *  - `list`: `<li>` rows whose text starts with the same long sender line and preview (over 256
 *    characters), the subject last: what differs between rows is past any cut of the row's text.
 * Below the list, a quick reply box with a live character count beside it.
 * `window.__inbox` gives tests the list and lets a message arrive.
 */
import { StrictMode, useState } from 'react';
import { createRoot } from 'react-dom/client';

interface Mail {
  id: number;
  subject: string;
}

declare global {
  interface Window {
    __inbox?: { arrive(subject: string): void; mails(): string[]; deleted: string[]; archived: string[]; reply: string };
  }
}

const layout = new URLSearchParams(location.search).get('layout') === 'list' ? 'list' : 'rows';
const SENDER = 'Notifications from Your Bank <no-reply@notifications.bank.example>';
const PREVIEW =
  'This message was sent to you because you hold an account with us. Please do not reply to this address; it is not monitored. ' +
  'To change which notifications you receive, open Settings, then Notifications. Your bank will never ask for your password.';
const FIRST: Mail[] = [
  { id: 1, subject: 'Invoice 12 (paid)' },
  { id: 2, subject: 'Newsletter: spring teas' },
  { id: 3, subject: 'Your order has shipped' },
];

let nextId = 100;
let mails: Mail[] = FIRST;
const debug: NonNullable<Window['__inbox']> = {
  arrive: () => undefined,
  mails: () => mails.map((m) => m.subject),
  deleted: [],
  archived: [],
  reply: '',
};
window.__inbox = debug;

function App() {
  const [list, setList] = useState<Mail[]>(FIRST);
  const [reply, setReply] = useState('');
  mails = list;
  debug.reply = reply;
  debug.arrive = (subject) => setList((old) => [{ id: nextId++, subject }, ...old]);
  const remove = (m: Mail, into: string[]) => {
    into.push(m.subject);
    setList((old) => old.filter((x) => x.id !== m.id));
  };
  return (
    <main aria-label="Messages">
      <h1>Messages</h1>
      {layout === 'rows' ? (
        <div className="mails">
          {list.map((m, i) => (
            // The mistake this page exists for: the index as the key.
            <div className="mail" key={i}>
              <span className="subject">{m.subject}</span> <span className="from">from Your Bank</span>
              <div className="actions">
                <button type="button" onClick={() => remove(m, debug.archived)}>
                  Archive
                </button>
                <button type="button" onClick={() => remove(m, debug.deleted)}>
                  Delete
                </button>
              </div>
            </div>
          ))}
        </div>
      ) : (
        <ul className="mails">
          {list.map((m, i) => (
            <li className="mail" key={i}>
              <span className="from">{SENDER}</span> <span className="preview">{PREVIEW}</span> <span className="subject">{m.subject}</span>{' '}
              <button type="button" onClick={() => remove(m, debug.deleted)}>
                Delete
              </button>
            </li>
          ))}
        </ul>
      )}
      <div className="reply">
        <textarea aria-label="Quick reply" name="reply" value={reply} maxLength={200} onChange={(e) => setReply(e.target.value)} />
        <span className="count">{reply.length}/200 characters</span>
      </div>
    </main>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
document.documentElement.dataset.ready = 'true';
