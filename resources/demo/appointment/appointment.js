// The submit handlers of book_appointment and request_callback (see index.html): each shows what it
// received (every submitted field, as FormData gives it) and answers the agent with event.respondWith.
(() => {
  'use strict';
  EchoDemo.warnIfUnavailable();
  function handle(formId, resultId, say) {
    const out = document.querySelector(`[data-testid="${resultId}"]`);
    document.getElementById(formId).addEventListener('submit', (event) => {
      event.preventDefault();
      const received = {};
      for (const [k, v] of new FormData(event.target).entries()) received[k] = String(v);
      out.textContent = say(received);
      out.dataset.count = String(Number(out.dataset.count) + 1);
      out.dataset.received = JSON.stringify(received);
      out.dataset.agentInvoked = String(event.agentInvoked === true);
      if (event.agentInvoked && typeof event.respondWith === 'function') event.respondWith(Promise.resolve({ ok: true, received }));
    });
  }
  handle('book', 'book-result', (r) => `Booked on ${r.day} at ${r.at}${r.reminder ? `, reminder at ${r.reminder}` : ''}.`);
  handle('callback', 'callback-result', (r) => `We will call on ${r.day} at ${r.at}.`);
  void EchoDemo.readyWhenListed(['book_appointment', 'leave_feedback', 'request_callback']);
})();
