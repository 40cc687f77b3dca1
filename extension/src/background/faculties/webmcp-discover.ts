/**
 * Faculty `webmcp-discover` (read), operation `discover`, arguments `{}`: the
 * same-origin WebMCP tools of one shared tab (docs/design.md, capability 1;
 * ../discovery.ts does the work in the `webmcp` content module). The link op
 * `discover {tabId}` is this faculty's `discover` too.
 */
import { err } from '../../../../src/shared/result';
import { WEBMCP_MODULE } from '../tabs';
import { discoverTab } from '../discovery';
import { isEmptyObject, type ReadFaculty } from './registry';

export const webmcpDiscover: ReadFaculty = {
  id: 'webmcp-discover',
  kind: 'read',
  operations: ['discover'],
  contentModule: WEBMCP_MODULE,
  checkRequest: (_operation, args) => (isEmptyObject(args) ? null : 'discover takes no arguments ({})'),
  async read(_operation, tabId, _args, services) {
    const shared = await services.sharedTab(tabId);
    if (!shared) return err('tab-not-shared', 'the tab is not shared');
    const r = await discoverTab(tabId, shared.origin);
    if (!r.ok && r.error.code === 'navigated') {
      await services.endSharing(tabId);
      return err('tab-not-shared', 'the tab left the shared origin; sharing ended');
    }
    return r;
  },
};
