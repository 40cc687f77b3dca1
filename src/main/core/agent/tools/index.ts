/**
 * The one list of the console's agent tools (docs/architecture.md, "Where to
 * add things"): `tools/list` is generated from the registry these seed. Each
 * tool is declared, handled and presented in its own file here. Developer
 * mode adds its tools to the registry at run time (./registry.ts).
 */
import type { AgentTool } from '../tool';
import { listTabs } from './list-tabs';
import { pageInfo } from './page-info';
import { pageSnapshot } from './page-snapshot';
import { pageExtract } from './page-extract';
import { pageVerify } from './page-verify';
import { pageWait } from './page-wait';
import { webmcpDiscover } from './webmcp-discover';
import { webmcpInvoke } from './webmcp-invoke';
import { requestStatus } from './request-status';
import { pageClick } from './page-click';
import { pageHover } from './page-hover';
import { pageFocus } from './page-focus';
import { pageScroll } from './page-scroll';
import { pageType } from './page-type';
import { pageFill } from './page-fill';
import { pageKey } from './page-key';
import { pagePatch } from './page-patch';
import { pageRevert } from './page-revert';

/** The tools every console offers, in the order `tools/list` shows them. */
export const AGENT_TOOLS: readonly AgentTool[] = [
  listTabs,
  webmcpDiscover,
  webmcpInvoke,
  pageInfo,
  pageSnapshot,
  pageExtract,
  pageWait,
  pageVerify,
  pageClick,
  pageHover,
  pageFocus,
  pageScroll,
  pageType,
  pageFill,
  pageKey,
  pagePatch,
  pageRevert,
  requestStatus,
];
