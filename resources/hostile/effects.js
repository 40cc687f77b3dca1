// Tools with effects outside the call, and attacks on the extension's sign (see effects.html).
(() => {
  'use strict';
  EchoDemo.warnIfUnavailable();
  const empty = { type: 'object', properties: {}, additionalProperties: false };
  const tools = new URLSearchParams(location.search).has('opened')
    ? [] // the opened copies register nothing: they are not what is being tested
    : [
        {
          name: 'open_link_in_new_tab',
          description: 'Clicks a link with target=_blank, then returns.',
          inputSchema: empty,
          execute: () => {
            document.getElementById('new-tab-link').click();
            return 'clicked';
          },
        },
        {
          name: 'open_window',
          description: 'Calls window.open, then returns whether it got a window.',
          inputSchema: empty,
          execute: () => {
            const w = window.open('/hostile/effects.html?opened=window&access_token=s3cret', '_blank');
            return w ? 'opened' : 'blocked';
          },
        },
        {
          name: 'show_alert',
          description: 'Shows an alert() and returns after the person closes it.',
          inputSchema: empty,
          execute: () => {
            alert('Hello from the page');
            return 'alert closed';
          },
        },
        {
          name: 'show_confirm',
          description: 'Asks confirm() and returns the answer.',
          inputSchema: empty,
          execute: () => (confirm('Proceed?') ? 'confirmed' : 'declined'),
        },
        {
          name: 'leave_page',
          description: 'Starts a navigation to another page, then returns.',
          inputSchema: empty,
          execute: () => {
            location.assign('/hostile/effects.html?opened=left');
            return 'navigation started';
          },
        },
        {
          name: 'choose_file',
          description: 'Asks the browser for a file chooser, and returns what happened.',
          inputSchema: empty,
          execute: () => {
            try {
              document.getElementById('file').showPicker();
              return 'picker shown';
            } catch (e) {
              return `picker refused: ${e && e.name}`;
            }
          },
        },
        {
          name: 'download_file',
          description: 'Clicks a download link, then returns.',
          inputSchema: empty,
          execute: () => {
            document.getElementById('download-link').click();
            return 'clicked';
          },
        },
        {
          name: 'wait_for_release',
          description: 'Answers when the page is told to (window.__release()).',
          inputSchema: empty,
          execute: () => new Promise((resolve) => (window.__release = () => resolve('released'))),
        },
        {
          name: 'user_activation',
          description: 'Reports navigator.userActivation while the tool runs.',
          inputSchema: empty,
          execute: () => JSON.stringify({ isActive: navigator.userActivation.isActive, hasBeenActive: navigator.userActivation.hasBeenActive }),
        },
      ];
  /** Ask "Leave site?" before any navigation away (Chrome shows it only after the person interacted with the page). */
  window.__guardLeaving = () =>
    window.addEventListener('beforeunload', (e) => {
      e.preventDefault();
      e.returnValue = '';
    });
  // Attacks on the sign, run from the page's own script (the tests call them).
  const hostOf = () => [...document.documentElement.children].filter((e) => e.tagName === 'DIV' && e.hasAttribute('popover')).pop() || null;
  window.__hostileSign = {
    host: hostOf,
    shadowRoot: () => (hostOf() ? hostOf().shadowRoot : 'no host'),
    cover: () => document.getElementById('cover').showPopover(),
    uncover: () => document.getElementById('cover').hidePopover(),
    modal: () => document.getElementById('modal').showModal(),
    closeModal: () => document.getElementById('modal').close(),
    remove: () => hostOf() && hostOf().remove(),
    hide: () => hostOf() && hostOf().hidePopover(),
    restyle: () => {
      const s = document.createElement('style');
      s.textContent = 'html > div[popover] { display: none !important; opacity: 0 !important; }';
      document.head.append(s);
      const h = hostOf();
      if (h) h.setAttribute('style', 'display:none !important; visibility:hidden !important');
    },
    /** Removes the host every time it comes back, forever: the sign's budget must stop it from looping. */
    fight: () => {
      let n = 0;
      new MutationObserver(() => {
        const h = hostOf();
        if (h) {
          n += 1;
          h.remove();
        }
      }).observe(document.documentElement, { childList: true });
      window.__hostileSign.removals = () => n;
      hostOf()?.remove();
    },
  };
  tools.sort((a, b) => (a.name < b.name ? -1 : 1)); // listed in name order, as the page table says
  void EchoDemo.registerAll(tools).then(() => EchoDemo.readyWhenListed(tools.map((t) => t.name)));
})();
