// The submit handler of schedule_visit (see index.html): shows the booking, answers the agent.
(() => {
  'use strict';
  EchoDemo.warnIfUnavailable();
  const out = document.querySelector('[data-testid="schedule-result"]');
  document.getElementById('schedule').addEventListener('submit', (event) => {
    event.preventDefault();
    const f = new FormData(event.target);
    const visit = {};
    for (const [k, v] of f.entries()) visit[k] = String(v);
    out.textContent = `Visit booked on ${visit.day} at ${visit.at} in the ${visit.room}.`;
    out.dataset.count = String(Number(out.dataset.count) + 1);
    out.dataset.visit = JSON.stringify(visit);
    out.dataset.agentInvoked = String(event.agentInvoked === true);
    if (event.agentInvoked && typeof event.respondWith === 'function') event.respondWith(Promise.resolve({ booked: true, visit }));
  });
  void EchoDemo.readyWhenListed(['schedule_visit']);
})();
