/**
 * An agent tool: something the agent can call on the console's MCP endpoint
 * (MCP spec 2025-06-18, "Tools"). Each is declared ONCE, in its own file under
 * ./tools/ (docs/design.md, "Trust rules" and "Conventions" §7: one declaration drives
 * `tools/list`, the argument check and the policy): name, title, description,
 * input schema, kind and faculty, with its handler and the presentation of its
 * answer. The declared `kind` — never the page's or the tool's own claims —
 * drives the approval policy (src/main/core/policy).
 *
 * Arguments are validated with ajv against the declared schema, and the
 * handler's argument type is DERIVED from that schema (json-schema-to-ts
 * `FromSchema`), so the schema and the handler can never disagree and no
 * handler casts its arguments.
 *
 * Page tools never become agent tools: they are reached only through
 * `webmcp_invoke` with an exact descriptor.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Ajv, type ValidateFunction } from 'ajv';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { Faculty } from '../../../shared/receipt';
import type { AgentContext, Broker } from '../broker';
import type { ToolKind } from '../policy';

/** What a handler gets besides its arguments. */
export interface ToolCallContext {
  broker: Broker;
  /** The caller, the declared kind and the MCP cancellation signal. */
  agent: AgentContext;
}

/** A failing path of an agent call's arguments (ajv's instancePath + message). */
export interface ToolArgumentIssue {
  instancePath: string;
  message: string;
}

/** An agent tool as the endpoint and the registry see it (the typed parts are closed over). */
export interface AgentTool {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  /** JSON Schema of the MCP `arguments` (type object), as `tools/list` shows it. */
  readonly inputSchema: { type: 'object'; [k: string]: unknown };
  readonly kind: ToolKind;
  /** The capability of the ladder it uses (receipts). */
  readonly faculty: Faculty;
  /** Validate `args` against `inputSchema`: null when valid, else at most 20 failing paths. */
  check(args: unknown): ToolArgumentIssue[] | null;
  /** Validate, then run the handler. Never throws: an invalid call answers `{issues}`. */
  call(args: unknown, ctx: ToolCallContext): Promise<{ ok: true; result: CallToolResult } | { ok: false; issues: ToolArgumentIssue[] }>;
}

/** The declaration of one agent tool; `inputSchema` must be `as const` so its type can be derived. */
export interface AgentToolSpec<S extends JSONSchema & { type: 'object' }, A> {
  name: string;
  title: string;
  description: string;
  inputSchema: S;
  kind: ToolKind;
  faculty: Faculty;
  /** Runs after the arguments validated; answers the MCP result the agent sees. */
  handle(args: A, ctx: ToolCallContext): Promise<CallToolResult>;
}

// `description` on properties is an annotation keyword Ajv knows; nothing else is extra.
const ajv = new Ajv({ strict: true, allErrors: true });

/**
 * Declare an agent tool; `A`, the handler's argument type, is derived from the
 * schema (leave it to its default). Compiles its schema once (strict ajv: a schema with an
 * unknown keyword fails here, at start, not at a call).
 * @throws Error from ajv when the schema is invalid.
 */
export function defineAgentTool<const S extends JSONSchema & { type: 'object' }, A = FromSchema<S>>(spec: AgentToolSpec<S, A>): AgentTool {
  const validate: ValidateFunction = ajv.compile(spec.inputSchema as object);
  // The guard's type is the one derived from the very schema ajv checks against.
  const valid = (x: unknown): x is A => validate(x) === true;
  const issues = (): ToolArgumentIssue[] =>
    (validate.errors ?? []).slice(0, 20).map((e) => ({
      instancePath: e.instancePath,
      message: `${e.message ?? e.keyword}${e.keyword === 'additionalProperties' ? `: ${String(e.params.additionalProperty).slice(0, 64)}` : ''}`,
    }));
  return {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    inputSchema: spec.inputSchema as unknown as AgentTool['inputSchema'],
    kind: spec.kind,
    faculty: spec.faculty,
    check: (args) => (valid(args) ? null : issues()),
    async call(args, ctx) {
      if (!valid(args)) return { ok: false, issues: issues() };
      return { ok: true, result: await spec.handle(args, ctx) };
    },
  };
}
