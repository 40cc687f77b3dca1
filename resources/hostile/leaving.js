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
  ).then(() => EchoDemo.readyWhenListed(['submit_and_leave']));
})();
