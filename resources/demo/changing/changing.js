// Run-time registration and unregistration. Deterministic triggers:
//   window.__changing.toggleExtra()       -> Promise<boolean> (true: extra_tool now registered)
//   window.__changing.add(name, desc?)    -> Promise<'registered'|'rejected'|'already'>
//   window.__changing.remove(name)        -> boolean (false: it was not registered here)
//   window.__changing.addForm() / removeForm()   the declarative dynamic_form
//   window.__changing.startCycle(ms) / stopCycle()
//   window.__changing.registered()        -> names this script registered and has not removed
//   window.__changing.toolchangeCount     -> toolchange events seen since load
(() => {
  'use strict';
  EchoDemo.warnIfUnavailable();
  const mc = document.modelContext;
  const controllers = new Map();
  let toolchanges = 0;
  let cycleTimer = null;

  const render = () => {
    document.querySelector('[data-testid="current-tools"]').textContent = [...controllers.keys()].sort().join(', ') || '(none)';
    document.querySelector('[data-testid="toolchange-count"]').textContent = String(toolchanges);
    document.documentElement.dataset.toolchangeCount = String(toolchanges);
  };
  mc?.addEventListener('toolchange', () => {
    toolchanges += 1;
    render();
  });

  function definition(name, description) {
    return {
      name,
      description: description ?? `A tool named ${name}, registered at run time.`,
      inputSchema: { type: 'object', properties: {} },
      annotations: { readOnlyHint: true },
      execute: () => ({ tool: name, at: new Date().toISOString() }),
    };
  }

  async function add(name = 'extra_tool', description) {
    if (controllers.has(name)) return 'already';
    const controller = new AbortController();
    controllers.set(name, controller);
    const [r] = await EchoDemo.registerAll([definition(name, description)], { signal: controller.signal, quiet: true });
    if (r.result !== 'registered') controllers.delete(name);
    render();
    return r.result;
  }

  function remove(name) {
    const controller = controllers.get(name);
    if (!controller) return false;
    controllers.delete(name);
    controller.abort();
    render();
    return true;
  }

  async function toggleExtra() {
    if (remove('extra_tool')) return false;
    return (await add('extra_tool')) === 'registered';
  }

  function addForm() {
    const slot = document.getElementById('form-slot');
    if (slot.querySelector('form')) return false;
    const form = document.createElement('form');
    form.setAttribute('toolname', 'dynamic_form');
    form.setAttribute('tooldescription', 'A form tool that appears and disappears.');
    form.setAttribute('toolautosubmit', '');
    const input = document.createElement('input');
    input.name = 'note';
    input.setAttribute('toolparamdescription', 'Any short note.');
    form.append(input);
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      if (e.agentInvoked) e.respondWith(Promise.resolve({ received: String(new FormData(form).get('note') ?? '') }));
    });
    slot.append(form);
    return true;
  }

  function removeForm() {
    const form = document.querySelector('#form-slot form');
    form?.remove();
    return Boolean(form);
  }

  function startCycle(ms) {
    stopCycle();
    cycleTimer = setInterval(() => {
      if (!remove('flicker_tool')) void add('flicker_tool', 'Here one moment, gone the next.');
    }, Math.max(10, Number(ms) || 1000));
  }

  function stopCycle() {
    if (cycleTimer !== null) clearInterval(cycleTimer);
    cycleTimer = null;
    remove('flicker_tool');
  }

  document.getElementById('toggle-extra').addEventListener('click', () => void toggleExtra());
  document.getElementById('toggle-form').addEventListener('click', () => {
    if (!removeForm()) addForm();
  });
  document.getElementById('toggle-cycle').addEventListener('click', () => {
    if (cycleTimer === null) startCycle(Number(new URLSearchParams(location.search).get('cycleMs')) || 2000);
    else stopCycle();
  });

  window.__changing = {
    add, remove, toggleExtra, addForm, removeForm, startCycle, stopCycle,
    registered: () => [...controllers.keys()].sort(),
    get toolchangeCount() { return toolchanges; },
  };

  (async () => {
    await add('get_time', 'Returns the current time of the page as an ISO 8601 string.');
    const unlock = new AbortController();
    controllers.set('unlock_advanced_tools', unlock);
    await EchoDemo.registerAll([{
      name: 'unlock_advanced_tools',
      title: 'Unlock advanced tools',
      description: 'Registers advanced_search, a tool that only exists after this call.',
      inputSchema: { type: 'object', properties: {} },
      annotations: { readOnlyHint: false },
      execute: async () => ({ unlocked: true, result: await add('advanced_search', 'Searches the page with filters (unlocked at run time).') }),
    }], { signal: unlock.signal, quiet: true });
    render();
    const cycleMs = Number(new URLSearchParams(location.search).get('cycleMs'));
    if (cycleMs > 0) startCycle(cycleMs);
    EchoDemo.markReady();
  })();
})();
