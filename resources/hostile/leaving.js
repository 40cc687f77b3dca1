// Tools that answer and then leave (see leaving.html).
(() => {
  'use strict';
  EchoDemo.warnIfUnavailable();
  document.querySelector('[data-testid="where"]').textContent = location.href;
  const empty = { type: 'object', properties: {}, additionalProperties: false };
  void EchoDemo.registerAll(
    new URLSearchParams(location.search).has('submitted') || new URLSearchParams(location.search).has('left')
      ? []
      : [
          {
            name: 'navigate_and_return',
            description: 'Starts a navigation to a new document, then returns at once.',
            inputSchema: empty,
            execute: () => {
              location.assign('/hostile/leaving.html?left=1');
              return 'navigation started';
            },
          },
          {
            name: 'push_state_and_return',
            description: 'Changes the URL in this document, then returns.',
            inputSchema: empty,
            execute: () => {
              history.pushState({}, '', '/hostile/leaving.html?step=2');
              return 'url changed';
            },
          },
        ],
  ).then(async () => {
    const mc = document.modelContext;
    if (mc) {
      for (let i = 0; i < 50; i++) {
        if ((await mc.getTools()).some((t) => t.name === 'submit_and_leave')) break;
        await EchoDemo.sleep(20);
      }
    }
    EchoDemo.markReady();
  });
})();
