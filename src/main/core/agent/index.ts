/**
 * The agent side of the console: the MCP endpoint (Streamable HTTP), its tool
 * table and the untrusted-content labelling. See ./endpoint.ts.
 */
export { AgentEndpoint, MCP_PATH, MAX_BODY_BYTES, type AgentEndpointOptions } from './endpoint';
export { AGENT_TOOLS } from './tools';
export { AgentToolRegistry } from './registry';
export { defineAgentTool, type AgentTool, type AgentToolSpec, type ToolCallContext } from './tool';
export { untrustedBlock, untrustedJson, neutraliseDelimiters, UNTRUSTED_TAG, LOOKALIKE_MARKER } from './untrusted';
