// Submit handlers for the two declarative tools (see index.html).
(() => {
  'use strict';
  EchoDemo.warnIfUnavailable();

  const show = (testid, text, data) => {
    const el = document.querySelector(`[data-testid="${testid}"]`);
    el.textContent = text;
    el.dataset.count = String(Number(el.dataset.count) + 1);
    for (const [k, v] of Object.entries(data)) el.dataset[k] = String(v);
  };

  document.getElementById('book-table').addEventListener('submit', (event) => {
    event.preventDefault();
    const f = new FormData(event.target);
    const booking = {
      booked: true,
      name: String(f.get('name') ?? ''),
      guests: Number(f.get('guests')),
      time: String(f.get('time') ?? ''),
      outdoor: f.get('outdoor') === 'on',
      confirmation: `T-${Math.floor(performance.now())}`,
    };
    show('booking-result', `Booked for ${booking.guests} at ${booking.time} under “${booking.name}”${booking.outdoor ? ' on the terrace' : ''}.`, {
      agentInvoked: event.agentInvoked === true,
    });
    if (event.agentInvoked && typeof event.respondWith === 'function') event.respondWith(Promise.resolve(booking));
  });

  document.getElementById('subscribe').addEventListener('submit', (event) => {
    event.preventDefault();
    const f = new FormData(event.target);
    const email = String(f.get('email') ?? '');
    const issuesRaw = f.get('issues');
    const issues = issuesRaw === null || issuesRaw === '' ? null : Number(issuesRaw);
    const problems = [];
    if (!/^[^@\s]+@[^@\s]+$/.test(email)) problems.push('email is not an address');
    if (f.get('terms') !== 'on') problems.push('the terms must be accepted');
    if (issues !== null && (!Number.isInteger(issues) || issues < 1 || issues > 52)) problems.push('issues must be 1 to 52');
    const result = problems.length
      ? { subscribed: false, error: 'invalid_form', problems }
      : { subscribed: true, email, frequency: String(f.get('frequency')), issues };
    // The "commit": the page shows the outcome, then answers the agent.
    // (setTimeout, not requestAnimationFrame: a background tab must answer too.)
    const committed = new Promise((resolve) => {
      setTimeout(() => {
        show('newsletter-result', result.subscribed ? `Subscribed ${email} (${result.frequency}).` : `Not subscribed: ${problems.join('; ')}.`, {
          agentInvoked: event.agentInvoked === true,
          subscribed: result.subscribed,
        });
        resolve(result);
      }, 0);
    });
    if (event.agentInvoked && typeof event.respondWith === 'function') event.respondWith(committed);
  });

  void EchoDemo.readyWhenListed(['book_table', 'subscribe_newsletter']);
})();
