/**
 * Preloaded with `node --require` into a child process: name resolution answers `::1` for
 * `localhost`, as on machines where localhost resolves to IPv6 first. These machines resolve
 * it to 127.0.0.1 only, so the tests inject this lookup to stage a squatter on `[::1]`
 * (issue 9 item 2). Other names resolve as usual.
 */
'use strict';
const dns = require('node:dns');

const original = dns.lookup;
dns.lookup = function lookup(host, options, callback) {
  if (typeof options === 'function') {
    callback = options;
    options = {};
  }
  if (host === 'localhost') {
    if (options && options.all) return process.nextTick(callback, null, [{ address: '::1', family: 6 }]);
    return process.nextTick(callback, null, '::1', 6);
  }
  return original.call(this, host, options, callback);
};
