/**
 * "Book a tasting": a React form with CONTROLLED inputs and no WebMCP tool (issue 10, "a React
 * controlled input"; the semantic controls' page_type and page_fill). Every field's value lives in
 * React state and is rendered back into the field; the submit button is disabled until the state
 * is valid, and the confirmation is rendered from the state, so a value set past React (without
 * the events its onChange listens to) would show nowhere but in the DOM. The card message is a
 * contenteditable element whose text React reads on `input`. The promo code field
 * rewrites what it is given (upper case), as many real fields do: a readback must see that.
 * `window.__signup` gives tests the state React holds.
 */
import { StrictMode, useState, type FormEvent } from 'react';
import { createRoot } from 'react-dom/client';

interface Booking {
  name: string;
  email: string;
  tea: string;
  size: string;
  date: string;
  time: string;
  notes: string;
  promo: string;
  card: string;
}

declare global {
  interface Window {
    __signup?: { state: Booking; submitted: Booking | null; changes: number };
  }
}

const EMPTY: Booking = { name: '', email: '', tea: '', size: '', date: '', time: '', notes: '', promo: '', card: '' };
const debug: NonNullable<Window['__signup']> = { state: EMPTY, submitted: null, changes: 0 };
window.__signup = debug;

function App() {
  const [b, setB] = useState<Booking>(EMPTY);
  const [submitted, setSubmitted] = useState<Booking | null>(null);
  debug.state = b;
  debug.submitted = submitted;
  const set = (k: keyof Booking) => (e: { target: { value: string } }) => {
    debug.changes++;
    const v = k === 'promo' ? e.target.value.toUpperCase() : e.target.value;
    setB((old) => ({ ...old, [k]: v }));
  };
  const valid = b.name.trim() !== '' && /.+@.+/.test(b.email) && b.tea !== '' && b.size !== '' && b.date !== '' && b.time !== '';
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    if (valid) setSubmitted(b);
  };
  if (submitted) {
    return (
      <main aria-label="Tasting">
        <h1>Booked</h1>
        <p role="status" id="confirmation">
          Thanks, {submitted.name}: {submitted.tea} ({submitted.size}) on {submitted.date} at {submitted.time}.
        </p>
      </main>
    );
  }
  return (
    <main aria-label="Tasting">
      <h1>Book a tasting</h1>
      <form aria-label="Booking" onSubmit={onSubmit}>
        <label>
          Your name <input name="name" value={b.name} onChange={set('name')} autoComplete="name" />
        </label>
        <label>
          Email <input name="email" type="email" value={b.email} onChange={set('email')} />
        </label>
        <label>
          Tea
          <select name="tea" value={b.tea} onChange={set('tea')}>
            <option value="">Choose…</option>
            <option value="sencha">Sencha (green)</option>
            <option value="assam">Assam (black)</option>
            <option value="oolong">Tieguanyin oolong</option>
          </select>
        </label>
        <fieldset>
          <legend>Size</legend>
          {['Small', 'Large'].map((s) => (
            <label key={s}>
              <input type="radio" name="size" value={s} checked={b.size === s} onChange={set('size')} /> {s}
            </label>
          ))}
        </fieldset>
        <label>
          Day <input name="date" type="date" value={b.date} onChange={set('date')} />
        </label>
        <label>
          Time <input name="time" type="time" value={b.time} onChange={set('time')} />
        </label>
        <label>
          Notes <textarea name="notes" value={b.notes} onChange={set('notes')} />
        </label>
        <label>
          Promo code <input name="promo" value={b.promo} onChange={set('promo')} />
        </label>
        <p id="card-label">Card message</p>
        <div
          role="textbox"
          aria-labelledby="card-label"
          className="card-message"
          contentEditable
          suppressContentEditableWarning
          onInput={(e) => {
            debug.changes++;
            const v = e.currentTarget.textContent ?? '';
            setB((old) => ({ ...old, card: v }));
          }}
        />
        <button type="submit" disabled={!valid}>
          Book
        </button>
      </form>
    </main>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
document.documentElement.dataset.ready = 'true';
